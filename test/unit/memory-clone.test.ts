import { describe, expect, it } from 'vitest';
import { clone } from '../../src/adapters/memory/tables.js';
import { nowIso } from '../../src/domain/time.js';

describe('the memory store copy of stored values', () => {
  it('copies JSON deeply: nothing of the copy is the original, every value equal', () => {
    const original = { a: 1, s: 'é', n: null, list: [1, { deep: [true, false] }, []], nested: { x: { y: 'z' } }, empty: {} };
    const copy = clone(original);
    expect(copy).toEqual(original);
    expect(copy).not.toBe(original);
    expect(copy.list).not.toBe(original.list);
    expect(copy.list[1]).not.toBe(original.list[1]);
    expect(copy.nested.x).not.toBe(original.nested.x);
    (copy.nested.x as { y: string }).y = 'changed';
    expect(original.nested.x.y).toBe('z');
  });

  it('keeps an own __proto__ key a key (the prototype untouched), as structuredClone does', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"ok":1}') as Record<string, unknown>;
    const copy = clone(parsed);
    expect(Object.keys(copy)).toEqual(['__proto__', 'ok']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"ok":1}');
  });

  it('copies what is not plain JSON as structuredClone does (a Date, a Map)', () => {
    const when = new Date('2026-01-02T03:04:05.006Z');
    const copy = clone({ when, map: new Map([['k', 1]]) });
    expect(copy.when).toEqual(when);
    expect(copy.when).not.toBe(when);
    expect(copy.map.get('k')).toBe(1);
  });
});

describe('nowIso', () => {
  it('formats each millisecond of the clock, the same text within one', () => {
    expect(nowIso(() => 0)).toBe('1970-01-01T00:00:00.000Z');
    expect(nowIso(() => 0)).toBe('1970-01-01T00:00:00.000Z');
    expect(nowIso(() => 1)).toBe('1970-01-01T00:00:00.001Z');
    expect(nowIso(() => Date.UTC(2026, 10, 28, 23, 59, 59, 999))).toBe('2026-11-28T23:59:59.999Z');
    expect(nowIso(() => 0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
