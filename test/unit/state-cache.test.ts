import { describe, expect, it } from 'vitest';
import { ThreadStateCache, versionOf } from '../../src/langgraph/state-cache.js';
import type { GraphCheckpointEntry } from '../../src/ports/graph-storage.js';

const entry = (over: Partial<GraphCheckpointEntry> = {}): GraphCheckpointEntry => ({
  threadId: 't',
  ns: '',
  record: { checkpointId: 'c1', checkpoint: '{"v":4}', metadata: '{"step":1}', versions: {} },
  values: { a: '"x"' },
  writes: [],
  ...over,
});
const write = { taskId: 'task', idx: 0, channel: 'a', value: '"y"', taskPath: '' };

describe('the latest-state cache of LangGraph threads', () => {
  it('names a stored checkpoint by its record and pending writes: any change makes another version', () => {
    const base = versionOf(entry());
    expect(versionOf(entry())).toBe(base);
    expect(versionOf(entry({ record: { ...entry().record, checkpointId: 'c2' } }))).not.toBe(base);
    expect(versionOf(entry({ record: { ...entry().record, metadata: '{"step":2}' } }))).not.toBe(base);
    const written = versionOf(entry({ writes: [write] }));
    expect(written).not.toBe(base);
    // A write replaced in place (same task, index and channel, another value) is another version too.
    expect(versionOf(entry({ writes: [{ ...write, value: '"z"' }] }))).not.toBe(written);
    // The order storage answers writes in does not matter.
    const other = { ...write, taskId: 'other' };
    expect(versionOf(entry({ writes: [write, other] }))).toBe(versionOf(entry({ writes: [other, write] })));
    // Too long to keep: no version, nothing cached under it.
    expect(versionOf(entry({ writes: [{ ...write, value: `"${'x'.repeat(40_000)}"` }] }))).toBeUndefined();
  });

  it('answers a thread at the version it kept, a fresh copy each time, and nothing at another version', () => {
    const cache = new ThreadStateCache();
    cache.set('t', 'v1', { values: { n: 1 } });
    const first = cache.get('t', 'v1')!;
    expect(first).toEqual({ values: { n: 1 } });
    (first.values as { n: number }).n = 99;
    expect(cache.get('t', 'v1')).toEqual({ values: { n: 1 } });
    expect(cache.get('t', 'v2')).toBeUndefined();
    expect(cache.get('t', undefined)).toBeUndefined();
    cache.set('t', undefined, { values: {} });
    expect(cache.get('t', 'v1')).toBeUndefined();
    cache.set('big', 'v', { values: { text: 'x'.repeat(40_000) } });
    expect(cache.get('big', 'v')).toBeUndefined();
  });

  it('keeps at most 512 threads, the least recently read going first', () => {
    const cache = new ThreadStateCache();
    for (let i = 0; i < 512; i += 1) cache.set(`t${i}`, 'v', { i });
    expect(cache.get('t0', 'v')).toEqual({ i: 0 });
    cache.set('t512', 'v', { i: 512 });
    expect(cache.get('t1', 'v')).toBeUndefined();
    expect(cache.get('t0', 'v')).toEqual({ i: 0 });
    expect(cache.get('t512', 'v')).toEqual({ i: 512 });
  });
});
