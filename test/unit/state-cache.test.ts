import { describe, expect, it } from 'vitest';
import { ThreadStateCache } from '../../src/langgraph/state-cache.js';

describe('the latest-state cache of LangGraph threads', () => {
  it('answers a thread at the version it kept, and nothing at another version or with no version', () => {
    const cache = new ThreadStateCache();
    cache.set('t', 'v1', '{"values":{"n":1}}');
    expect(cache.get('t', 'v1')).toBe('{"values":{"n":1}}');
    expect(cache.get('t', 'v2')).toBeUndefined();
    expect(cache.get('t', '')).toBeUndefined();
    // Kept under no version: the thread is forgotten.
    cache.set('t', '', '{"values":{}}');
    expect(cache.get('t', 'v1')).toBeUndefined();
    cache.set('big', 'v', `{"values":{"text":"${'x'.repeat(40_000)}"}}`);
    expect(cache.get('big', 'v')).toBeUndefined();
  });

  it('keeps at most 512 threads, the least recently read going first', () => {
    const cache = new ThreadStateCache();
    for (let i = 0; i < 512; i += 1) cache.set(`t${i}`, 'v', `{"i":${i}}`);
    expect(cache.get('t0', 'v')).toBe('{"i":0}');
    cache.set('t512', 'v', '{"i":512}');
    expect(cache.get('t1', 'v')).toBeUndefined();
    expect(cache.get('t0', 'v')).toBe('{"i":0}');
    expect(cache.get('t512', 'v')).toBe('{"i":512}');
  });
});
