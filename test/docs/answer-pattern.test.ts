import { describe, expect, it } from 'vitest';
import { matchPattern, parsePattern, substitute, type Bindings } from './answer-pattern.js';
import { eventsMismatch } from './run-curl.js';

const matches = (pattern: string, actual: unknown, bindings: Bindings = new Map()) => matchPattern(parsePattern(pattern), actual, bindings);

/** The README examples test is only as good as its matching: each rule refuses what it should. */
describe('README answer patterns', () => {
  it('compares values as written, keys exactly unless … allows more', () => {
    expect(matches('{"status":"deleted"}', { status: 'deleted' })).toBeUndefined();
    expect(matches('{"status":"deleted"}', { status: 'gone' })).toMatch(/\$\.status/);
    expect(matches('{"status":"deleted"}', { status: 'deleted', id: 'x' })).toMatch(/keys id are not shown/);
    expect(matches('{…"seq_num":4…}', { seq_num: 4, state: {} })).toBeUndefined();
    expect(matches('{…"seq_num":4…}', { seq_num: 5 })).toMatch(/\$\.seq_num/);
    expect(matches('{"a":1,…}', {})).toMatch(/no key a/);
  });

  it('holds arrays to the elements shown, … allowing more', () => {
    expect(matches('{"runs":[{"id":"…"}]}', { runs: [] })).toMatch(/0 elements where the example shows 1/);
    expect(matches('{"runs":[{"id":"…"}]}', { runs: [{ id: 'a' }, { id: 'b' }] })).toMatch(/2 elements/);
    expect(matches('[{"id":"a"},…]', [{ id: 'a' }, { id: 'b' }])).toBeUndefined();
    expect(matches('[…]', [])).toBeUndefined();
  });

  it('compares made-up values by shape: any string for …, any timestamp for a timestamp', () => {
    expect(matches('{"at":"2026-11-21T10:05:00.000Z","by":"…"}', { at: '2030-01-01T00:00:00.123Z', by: 'ana' })).toBeUndefined();
    expect(matches('{"at":"2026-11-21T10:05:00.000Z"}', { at: 'soon' })).toMatch(/not a timestamp/);
    expect(matches('{"n":"…"}', { n: 3 })).toMatch(/not a string/);
  });

  it('binds a placeholder at its first answer and holds it to that value after', () => {
    const bindings: Bindings = new Map();
    expect(matches('{"run_id":"0193…"}', { run_id: 'r-1' }, bindings)).toBeUndefined();
    expect(bindings.get('0193…')).toBe('r-1');
    expect(matches('{"approval_id":"0193….2"}', { approval_id: 'r-1.2' }, bindings)).toBeUndefined();
    expect(matches('{"approval_id":"0193….2"}', { approval_id: 'r-2.2' }, bindings)).toMatch(/does not match/);
    expect(substitute('curl $B/api/approvals/0193….2', bindings)).toBe('curl $B/api/approvals/r-1.2');
    // A mismatch binds nothing.
    expect(matches('{"id":"0194…","status":"done"}', { id: 'r-3', status: 'failed' }, bindings)).toBeDefined();
    expect(bindings.has('0194…')).toBe(false);
  });

  it('finds the frames of a stream in order, … where some are left out', () => {
    const shown = ['retry: 3000', '', 'id: 1763719200000-0', 'data: {"type":"node_start",…}', '…', ': keep-alive'];
    const stream = ['retry: 3000', '', 'id: 1795651021144-0', 'data: {"type":"node_start","node":"a"}', '', 'id: 1795651021145-0', 'data: {"type":"completed"}', '', ': keep-alive'];
    expect(eventsMismatch(shown, stream)).toBeUndefined();
    expect(eventsMismatch(shown, stream.slice(1))).toBe('retry: 3000');
    expect(eventsMismatch(shown, stream.slice(0, -1))).toBe(': keep-alive');
  });
});
