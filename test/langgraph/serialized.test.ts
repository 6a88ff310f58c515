import { describe, expect, it } from 'vitest';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { deserialize, serialize } from '../../src/langgraph/serialized.js';

/** What storage held for a value before plain JSON skipped the serializer: its `json` bytes as text. */
async function throughSerializer(serde: JsonPlusSerializer, value: unknown): Promise<string> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return type === 'json' ? `j${Buffer.from(bytes).toString('utf8')}` : `b${type}`;
}

const deep = (levels: number): unknown => (levels === 0 ? 'bottom' : { deeper: deep(levels - 1) });
const cyclic: Record<string, unknown> = { name: 'loop' };
cyclic.self = cyclic;

/** Plain JSON (taken without the serializer) and every shape its replacer rewrites (taken through it). */
const VALUES: [string, unknown][] = [
  ['null', null],
  ['booleans, numbers, strings', [true, false, 0, -0, 1.5, 'text', 'é日本 🙂']],
  ['a lone surrogate (the serializer writes UTF-8)', 'half \ud800 of a pair'],
  ['NaN and Infinity', { nan: Number.NaN, inf: Number.POSITIVE_INFINITY }],
  ['a checkpoint without its values', { v: 4, id: 'id', ts: '2026-12-07T13:00:00.000Z', channel_versions: { a: '00001.0.1', b: 2 }, versions_seen: { __input__: {}, n: { a: 1 } } }],
  ['an object without a prototype', Object.assign(Object.create(null) as object, { a: 1 })],
  ['undefined, in an object and in an array', { kept: 1, gone: undefined, list: [undefined, 1] }],
  ['a Set, a Map, a Date, a RegExp, an Error, bytes', { set: new Set([1]), map: new Map([[1, 2]]), date: new Date(0), re: /a+/g, error: new Error('boom'), bytes: new Uint8Array([1, 2]) }],
  ['a plain object the serializer takes for a Send', { lg_name: 'Send', node: 'next', args: { n: 1 } }],
  ['an object with its own toJSON', { toJSON: () => 'as json' }],
  ['nesting deeper than the plain path looks', deep(40)],
  ['a cycle', cyclic],
];

describe('stored LangGraph values', () => {
  const serde = new JsonPlusSerializer();

  it.each(VALUES)('%s: stored as LangGraph’s serializer writes it, read back as it reads it', async (_name, value) => {
    const stored = await serialize(serde, value);
    expect(stored).toBe(await throughSerializer(serde, value));
    expect(await deserialize(serde, stored)).toEqual(await serde.loadsTyped('json', stored.slice(1)));
  });

  it('reads records the serializer wrote (undefined, a Set, a LangChain message) as it revives them', async () => {
    const stored = await serialize(serde, { gone: undefined, set: new Set(['a']), list: [1, { lc: 2, type: 'undefined' }] });
    const read = (await deserialize(serde, stored)) as Record<string, unknown>;
    expect(read).toEqual({ gone: undefined, set: new Set(['a']), list: [1, undefined] });
    const message = 'j{"m":{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}}';
    expect(((await deserialize(serde, message)) as { m: { constructor: { name: string }; content: unknown } }).m).toMatchObject({ content: 'hi' });
    expect(((await deserialize(serde, message)) as { m: object }).m.constructor.name).toBe('HumanMessage');
  });

  it('leaves a serializer of its own, even a JsonPlusSerializer with a method replaced, to write everything', async () => {
    const own = new JsonPlusSerializer();
    own.dumpsTyped = async () => ['json', new TextEncoder().encode('"own"')];
    expect(await serialize(own, { a: 1 })).toBe('j"own"');
  });
});
