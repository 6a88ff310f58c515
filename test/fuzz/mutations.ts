import fc from 'fast-check';
import { deref, schemaObject, typesOf, type JsonSchema, type OpenApiDocument, type Operation, type ParameterDoc } from './document.js';
import { marker, RAW_NUMBERS, urlEncode, type Draft } from './draft.js';
import { awkwardText } from './values.js';

/** One change that turns a valid request into a suspicious one. */
export type Mutation =
  | { kind: 'drop-param'; name: string }
  | { kind: 'set-param'; name: string; in: 'path' | 'query'; value: string; why: string }
  | { kind: 'repeat-param'; name: string; value: string }
  | { kind: 'extra-param'; name: string; value: string }
  | { kind: 'drop-field'; field: string }
  | { kind: 'set-field'; path: string[]; value: unknown; why: string }
  | { kind: 'body'; json: unknown; why: string }
  | { kind: 'raw-body'; text: string; why: string }
  | { kind: 'content-type'; value: string | null }
  | { kind: 'content-encoding'; value: string; valid: boolean }
  | { kind: 'chunked' }
  | { kind: 'header'; name: string; value: string };

/** A parameter value the parameter's schema does not allow (or that is merely hostile). */
function badParamValue(doc: OpenApiDocument, p: ParameterDoc): fc.Arbitrary<{ value: string; why: string }> {
  const schema = schemaObject(deref(doc, p.schema));
  const numeric = typesOf(schema).some((t) => t === 'integer' || t === 'number');
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const outOfRange = [
    ...(min !== undefined ? [String(min - 1)] : []),
    ...(max !== undefined ? [String(max + 1)] : []),
    '9007199254740993',
    `1${'0'.repeat(30)}`,
    '-1',
  ];
  return fc.oneof(
    fc.constantFrom('', 'abc', '1.5', '1e3', '%201', '0x10', '%2B5', 'NaN', 'Infinity', '%D9%A1', 'true', 'null').map((value) => ({ value, why: 'wrong type' })),
    ...(numeric ? [fc.constantFrom(...outOfRange).map((value) => ({ value, why: 'out of range' }))] : []),
    awkwardText.map((s) => ({ value: urlEncode(s), why: 'unicode' })),
    fc.constantFrom('%', '%ff', '%E0%A4%A', '%ED%A0%80', '%00', '..%2F..%2Fetc', 'a%20b', 'x'.repeat(129)).map((value) => ({ value, why: 'malformed' })),
    fc
      .record({ unit: fc.constantFrom('ascii' as const, 'utf8' as const), bytes: fc.constantFrom(2_000, 9_000, 20_000, 70_000) })
      .map(({ unit, bytes }) => ({ value: marker.huge(unit, bytes), why: 'huge' })),
  );
}

/** A JSON value that breaks a field: another type, a huge or awkward string, deep nesting, a number out of range. */
const badFieldValue: fc.Arbitrary<{ value: unknown; why: string }> = fc.oneof(
  {
    arbitrary: fc.constantFrom<unknown>(null, true, 0, -1, 1.5, '', 'text', [], [1, 'a'], {}, { a: 1 }).map((value) => ({ value, why: 'wrong type' })),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({ unit: fc.constantFrom('ascii' as const, 'utf8' as const), bytes: fc.constantFrom(16 * 1024, 1024 * 1024 + 64) })
      .map(({ unit, bytes }) => ({ value: marker.huge(unit, bytes), why: 'huge string' })),
    weight: 1,
  },
  { arbitrary: awkwardText.map((value) => ({ value, why: 'unicode' })), weight: 1 },
  {
    arbitrary: fc
      .record({ shape: fc.constantFrom('array' as const, 'object' as const), depth: fc.oneof(fc.integer({ min: 2, max: 64 }), fc.integer({ min: 500, max: 20_000 })) })
      .map(({ shape, depth }) => ({ value: marker.deep(shape, depth), why: 'deep nesting' })),
    weight: 2,
  },
  { arbitrary: fc.nat({ max: RAW_NUMBERS.length - 1 }).map((index) => ({ value: marker.number(index), why: 'number out of range' })), weight: 1 },
);

/** Whole bodies that are not the documented object. */
const badBody: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom<unknown>([], [{}], 'text', 42, null, true).map((json): Mutation => ({ kind: 'body', json, why: 'not an object' })),
  fc
    .constantFrom('', '{', '{"a":', '{"a" 1}', "{'a':1}", '{"a":1,}', 'NaN', '\ufeff{}', '{"a":"\\ud800"}', '{"a":1}{"b":2}', '\u0000')
    .map((text): Mutation => ({ kind: 'raw-body', text, why: 'not JSON' })),
  fc
    .record({ shape: fc.constantFrom('array' as const, 'object' as const), depth: fc.integer({ min: 500, max: 20_000 }) })
    .map(({ shape, depth }): Mutation => ({ kind: 'body', json: marker.deep(shape, depth), why: 'deep nesting' })),
);

const contentTypes = fc.constantFrom<string | null>(
  null,
  '',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=x-unknown',
  'application/vnd.api+json',
  'application/json-patch+json',
  'application/*',
  'APPLICATION/JSON',
);

const headerMutations: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom('1', '"1"', 'W/"2"', '*', 'abc', '"99999999999999999999"', '-1', '""').map((value): Mutation => ({ kind: 'header', name: 'If-Match', value })),
  fc.constantFrom('', 'x'.repeat(200), 'a b', '../../x').map((value): Mutation => ({ kind: 'header', name: 'X-Request-Id', value })),
  fc.constantFrom('text/html', 'application/xml', 'text/event-stream', '*/*;q=0').map((value): Mutation => ({ kind: 'header', name: 'Accept', value })),
);

type Weighted = { arbitrary: fc.Arbitrary<Mutation>; weight: number };

/** The mutations that make sense for an operation, weighted towards bad values. */
export function mutationsFor(doc: OpenApiDocument, op: Operation): fc.Arbitrary<Mutation> {
  const params = op.parameters.filter((p) => p.in === 'query' || p.in === 'path');
  const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const required = params.filter((p) => p.required);
  const choices: Weighted[] = [
    { arbitrary: headerMutations, weight: 1 },
    { arbitrary: badBody, weight: 1 },
    { arbitrary: contentTypes.map((value): Mutation => ({ kind: 'content-type', value })), weight: 1 },
    {
      arbitrary: fc
        .record({
          name: fc.oneof(fc.constantFrom('limit', 'offset', 'session_id', 'id', '__proto__', 'constructor'), fc.string({ minLength: 1, maxLength: 6 }).map(urlEncode)),
          value: fc.constantFrom('1', 'x', ''),
        })
        .filter((m) => !params.some((p) => p.name === m.name))
        .map((m): Mutation => ({ kind: 'extra-param', ...m })),
      weight: 1,
    },
  ];
  if (required.length > 0) choices.push({ arbitrary: fc.constantFrom(...required).map((p): Mutation => ({ kind: 'drop-param', name: p.name })), weight: 1 });
  if (params.length > 0) {
    const setParam = fc
      .constantFrom(...params)
      .chain((p) => badParamValue(doc, p).map(({ value, why }): Mutation => ({ kind: 'set-param', name: p.name, in: p.in === 'path' ? 'path' : 'query', value, why })));
    choices.push({ arbitrary: setParam, weight: 3 });
  }
  if (queryNames.length > 0) {
    const repeat = fc.record({ name: fc.constantFrom(...queryNames), value: fc.constantFrom('1', 'a', '') }).map((m): Mutation => ({ kind: 'repeat-param', ...m }));
    choices.push({ arbitrary: repeat, weight: 1 });
  }
  if (op.body) choices.push(...bodyMutations(doc, op.body));
  return fc.oneof(...choices);
}

/** Field-level mutations of a JSON body, and its encodings. */
function bodyMutations(doc: OpenApiDocument, schema: JsonSchema): Weighted[] {
  const body = schemaObject(deref(doc, schema));
  const declared = (body.properties ?? {}) as Record<string, JsonSchema>;
  const properties = Object.keys(declared);
  const freeForm = properties.filter((key) => {
    const s = schemaObject(deref(doc, declared[key]));
    return typesOf(s).includes('object') && s.additionalProperties !== false;
  });
  const fieldPath = fc.oneof(
    ...(properties.length > 0 ? [{ arbitrary: fc.constantFrom(...properties).map((key) => [key]), weight: 2 }] : []),
    ...(freeForm.length > 0 ? [{ arbitrary: fc.tuple(fc.constantFrom(...freeForm), fc.string({ minLength: 1, maxLength: 6 })).map(([a, b]) => [a, b]), weight: 3 }] : []),
    { arbitrary: fc.string({ minLength: 1, maxLength: 8 }).map((key) => [key]), weight: 1 },
  );
  const encodings = fc.constantFrom(
    { value: 'gzip', valid: true },
    { value: 'gzip', valid: false },
    { value: 'deflate', valid: false },
    { value: 'br', valid: false },
    { value: 'x-unknown', valid: false },
  );
  const requiredFields = ((body.required ?? []) as string[]).filter((key) => properties.includes(key));
  return [
    { arbitrary: fc.record({ path: fieldPath, bad: badFieldValue }).map(({ path, bad }): Mutation => ({ kind: 'set-field', path, value: bad.value, why: bad.why })), weight: 4 },
    { arbitrary: encodings.map((m): Mutation => ({ kind: 'content-encoding', ...m })), weight: 1 },
    { arbitrary: fc.constant<Mutation>({ kind: 'chunked' }), weight: 1 },
    ...(requiredFields.length > 0 ? [{ arbitrary: fc.constantFrom(...requiredFields).map((field): Mutation => ({ kind: 'drop-field', field })), weight: 1 }] : []),
  ];
}

export function apply(draft: Draft, mutation: Mutation): Draft {
  const next: Draft = { ...draft, path: { ...draft.path }, query: [...draft.query], headers: { ...draft.headers }, mutations: [...draft.mutations] };
  const object = () => (typeof next.json === 'object' && next.json !== null && !Array.isArray(next.json) ? { ...(next.json as Record<string, unknown>) } : {});
  switch (mutation.kind) {
    case 'drop-param':
      delete next.path[mutation.name];
      next.query = next.query.filter(([name]) => name !== mutation.name);
      next.mutations.push(`missing ${mutation.name}`);
      break;
    case 'set-param':
      if (mutation.in === 'path') next.path[mutation.name] = mutation.value;
      else next.query = [...next.query.filter(([n]) => n !== mutation.name), [mutation.name, mutation.value]];
      next.mutations.push(`${mutation.name}: ${mutation.why}`);
      break;
    case 'repeat-param':
      next.query.push([mutation.name, mutation.value], [mutation.name, mutation.value]);
      next.mutations.push(`${mutation.name} repeated`);
      break;
    case 'extra-param':
      next.query.push([mutation.name, mutation.value]);
      next.mutations.push(`extra parameter ${mutation.name}`);
      break;
    case 'drop-field': {
      const json = object();
      delete json[mutation.field];
      next.json = json;
      next.raw = undefined;
      next.mutations.push(`body without ${mutation.field}`);
      break;
    }
    case 'set-field': {
      const json = object();
      const [first, second] = mutation.path as [string, string?];
      if (second === undefined) json[first] = mutation.value;
      else {
        const inner = json[first];
        json[first] = { ...(typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? inner : {}), [second]: mutation.value };
      }
      next.json = json;
      next.raw = undefined;
      next.mutations.push(`body.${mutation.path.join('.')}: ${mutation.why}`);
      break;
    }
    case 'body':
      next.json = mutation.json;
      next.raw = undefined;
      next.mutations.push(`body ${mutation.why}`);
      break;
    case 'raw-body':
      next.raw = mutation.text;
      next.mutations.push(`body ${mutation.why}`);
      break;
    case 'content-type':
      if (next.json === undefined && next.raw === undefined) next.json = {};
      next.contentType = mutation.value;
      next.mutations.push(`Content-Type ${mutation.value === null ? 'absent' : JSON.stringify(mutation.value)}`);
      break;
    case 'content-encoding':
      next.contentEncoding = { value: mutation.value, valid: mutation.valid };
      next.mutations.push(`Content-Encoding ${mutation.value}${mutation.valid ? '' : ' (not encoded)'}`);
      break;
    case 'chunked':
      next.chunked = true;
      next.mutations.push('chunked body');
      break;
    case 'header':
      next.headers[mutation.name] = mutation.value;
      next.mutations.push(`${mutation.name}: ${JSON.stringify(mutation.value.length > 40 ? `${mutation.value.slice(0, 40)}…` : mutation.value)}`);
      break;
  }
  return next;
}
