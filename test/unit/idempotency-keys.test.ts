import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyKeys } from '../../src/adapters/memory/idempotency-keys.js';
import { canonicalJson, IDEMPOTENCY_TTL_MS, idempotentStart } from '../../src/domain/idempotency.js';

describe('Idempotency-Keys of run starts', () => {
  it('fingerprints the run fields whatever their key order; scopes a key to its caller', () => {
    const a = idempotentStart('apikey:1', 'k', { agent_id: 'echo', input: { b: 1, a: [1, { d: 2, c: 3 }] } });
    const b = idempotentStart('apikey:1', 'k', { input: { a: [1, { c: 3, d: 2 }], b: 1 }, agent_id: 'echo', session_id: undefined });
    expect(b).toEqual(a);
    expect(idempotentStart('apikey:2', 'k', { agent_id: 'echo' }).scope).not.toBe(idempotentStart('apikey:1', 'k', { agent_id: 'echo' }).scope);
    expect(idempotentStart('apikey:1', 'k', { agent_id: 'echo', input: { b: 2 } }).fingerprint).not.toBe(a.fingerprint);
    expect(canonicalJson({ z: [undefined, 'x'], a: null })).toBe('{"a":null,"z":[null,"x"]}');
  });

  it('in memory: remembers a key for 24 h, refuses other fields, and keeps at most maxKeys (the oldest go first)', () => {
    let now = 1_000;
    const keys = new MemoryIdempotencyKeys(() => now, 3);
    const start = (key: string, text = 'x') => idempotentStart('anonymous', key, { agent_id: 'echo', input: { text } });
    keys.remember('t', start('one'), 'run-1');
    expect(keys.find('t', start('one'))).toBe('run-1');
    expect(keys.find('other-tenant', start('one'))).toBeUndefined();
    expect(() => keys.find('t', start('one', 'y'))).toThrow(expect.objectContaining({ code: 'idempotency_key_reused' }));

    now += IDEMPOTENCY_TTL_MS - 1;
    expect(keys.find('t', start('one'))).toBe('run-1');
    now += 1;
    expect(keys.find('t', start('one'))).toBeUndefined();

    // A full set drops its oldest key for a new one.
    keys.remember('t', start('a'), 'run-a');
    keys.remember('t', start('b'), 'run-b');
    keys.remember('t', start('c'), 'run-c');
    keys.remember('t', start('d'), 'run-d');
    expect(['a', 'b', 'c', 'd'].map((k) => keys.find('t', start(k)))).toEqual([undefined, 'run-b', 'run-c', 'run-d']);
  });
});
