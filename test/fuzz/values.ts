import fc from 'fast-check';
import { deref, schemaObject, typesOf, type JsonSchema, type OpenApiDocument } from './document.js';

/**
 * What the fuzzer knows beyond the schemas: ids it saw in the app's answers (sessions, runs,
 * approvals, agents, schedules…) and the `example` values of the document, both by the field
 * name they stand under. Generated strings for a field of a known name are often one of these,
 * so valid requests reach existing resources and pass checks no schema spells out (a cron
 * expression). Read at generation time: ids learned during the run are used by later cases.
 */
export class Vocabulary {
  private readonly ids = new Map<string, Set<string>>();
  private readonly examples = new Map<string, Set<string>>();

  /** Files `value` under `name` (`session_id`, `id`, …). */
  addId(name: string, value: string): void {
    add(this.ids, name, value);
  }

  /** Strings known for `name`: ids (under that name, else all ids, for id-like names) and examples. */
  candidates(name: string): string[] {
    const examples = [...(this.examples.get(name) ?? [])];
    if (!isIdName(name)) return examples;
    const own = this.ids.get(name);
    const ids = own && own.size > 0 ? [...own] : [...new Set([...this.ids.values()].flatMap((values) => [...values]))];
    return [...ids, ...examples];
  }

  /**
   * Learns every string under a key `id` or `*_id` of a JSON value. An `id` inside an array
   * named like `sessions` is also filed as `session_id`.
   */
  harvest(value: unknown, key = '', parent = ''): void {
    if (Array.isArray(value)) {
      for (const item of value) this.harvest(item, '', key || parent);
      return;
    }
    if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) this.harvest(v, k, parent);
      return;
    }
    if (typeof value !== 'string' || !isIdName(key)) return;
    this.addId(key, value);
    if (key === 'id' && parent.endsWith('s')) this.addId(`${parent.slice(0, -1)}_id`, value);
  }

  /** Learns the string `example` of every property of every schema in the document. */
  learnExamples(node: unknown): void {
    if (Array.isArray(node)) for (const item of node) this.learnExamples(item);
    if (typeof node !== 'object' || node === null) return;
    const properties = (node as { properties?: unknown }).properties;
    if (typeof properties === 'object' && properties !== null) {
      for (const [name, schema] of Object.entries(properties)) {
        const example = (schema as { example?: unknown } | null)?.example;
        if (typeof example === 'string') add(this.examples, name, example);
      }
    }
    for (const child of Object.values(node)) this.learnExamples(child);
  }
}

function add(map: Map<string, Set<string>>, name: string, value: string): void {
  const values = map.get(name) ?? new Set<string>();
  values.add(value);
  map.set(name, values);
}

/** `id`, `session_id`, `session`: names whose values are identifiers of stored resources. */
export function isIdName(name: string): boolean {
  return /(^|_)id$/.test(name) || name === 'session';
}

/** Pieces of text that break careless code: unicode planes, RTL, zero-width, NUL, quotes. */
export const awkwardText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', ' ', '\u0000', '\u202e\u0041\u0042', '\u200b', '💥🧨', 'ǅ\u0301\u0302', '"\'\\`${x}', '<script>', '../..', 'null', '__proto__'),
);

/** A timestamp in the contract's form: RFC 3339, UTC, milliseconds. */
const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

/** A small free-form JSON value (`{}` schemas). */
const anyJson = fc.jsonValue({ maxDepth: 2, depthSize: 'small' });

/**
 * Values valid for a JSON Schema (the subset zod emits: $ref, const, enum, anyOf/oneOf/allOf,
 * string with pattern/length/format, integer and number bounds, boolean, null, array, object).
 * `name` is the field or parameter the value is for: known ids and examples of that name mix in.
 */
export function validValue(doc: OpenApiDocument, input: JsonSchema | undefined, known: Vocabulary, name = '', depth = 0): fc.Arbitrary<unknown> {
  const schema = schemaObject(deref(doc, input));
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union) return fc.oneof(...union.map((s) => validValue(doc, s, known, name, depth + 1)));
  if (Array.isArray(schema.allOf)) {
    const merged = Object.assign({}, ...(schema.allOf as JsonSchema[]).map((s) => schemaObject(deref(doc, s))));
    return validValue(doc, merged as JsonSchema, known, name, depth + 1);
  }
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => validValue(doc, { ...schema, type }, known, name, depth + 1)));
  switch (types[0]) {
    case 'string':
      return stringValue(schema, known, name);
    case 'integer':
      return fc.integer({ min: bound(schema, 'minimum', -1e6), max: bound(schema, 'maximum', 1e6) });
    case 'number':
      return fc.double({ min: bound(schema, 'minimum', -1e6), max: bound(schema, 'maximum', 1e6), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validValue(doc, schema.items as JsonSchema, known, name, depth + 1), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3),
      });
    case 'object':
      return objectValue(doc, schema, known, depth);
    default:
      return anyJson;
  }
}

function bound(schema: Record<string, unknown>, key: 'minimum' | 'maximum', fallback: number): number {
  const value = typeof schema[key] === 'number' ? (schema[key] as number) : fallback;
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, value));
}

function stringValue(schema: Record<string, unknown>, known: Vocabulary, name: string): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? 10_000;
  let generated: fc.Arbitrary<string>;
  if (typeof schema.pattern === 'string') generated = fc.stringMatching(new RegExp(schema.pattern));
  else if (schema.format === 'date-time') generated = timestamp;
  else generated = fc.oneof(fc.string({ maxLength: 16 }), awkwardText);
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  // Three times in four a known value for this name, when there is one at generation time.
  return fc.tuple(generated.filter(fits), fc.nat(), fc.nat({ max: 3 })).map(([made, index, pick]) => {
    const candidates = pick < 3 ? known.candidates(name).filter(fits) : [];
    return candidates.length > 0 ? candidates[index % candidates.length]! : made;
  });
}

function objectValue(doc: OpenApiDocument, schema: Record<string, unknown>, known: Vocabulary, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  const declared = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, validValue(doc, s, known, key, depth + 1)])),
    { requiredKeys: required.filter((key) => key in properties) },
  );
  const extra = schema.additionalProperties;
  if (extra === false || depth > 3) return declared;
  const extras = fc.dictionary(
    fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), awkwardText).filter((key) => !(key in properties) && key !== '__proto__'),
    extra === undefined || extra === true ? anyJson : validValue(doc, extra as JsonSchema, known, '', depth + 1),
    { maxKeys: 3 },
  );
  return fc.tuple(declared, extras).map(([d, e]) => ({ ...e, ...d }));
}
