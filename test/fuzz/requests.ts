import fc from 'fast-check';
import type { OpenApiDocument, Operation, ParameterDoc } from './document.js';
import { encode, urlEncode, withDescription, type Draft, type FuzzRequest } from './draft.js';
import { apply, mutationsFor } from './mutations.js';
import { validValue, type Vocabulary } from './values.js';

/** A valid request for the operation, by its document: every parameter and the body from its schema. */
function validDraft(doc: OpenApiDocument, op: Operation, known: Vocabulary): fc.Arbitrary<Draft> {
  const param = (p: ParameterDoc) => validValue(doc, p.schema, known, p.name).map((v) => urlEncode(String(v)));
  const inPath = op.parameters.filter((p) => p.in === 'path');
  const inQuery = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header');
  return fc
    .record({
      path: fc.record(Object.fromEntries(inPath.map((p) => [p.name, param(p)]))),
      query: fc.record(Object.fromEntries(inQuery.map((p) => [p.name, param(p)])), { requiredKeys: inQuery.filter((p) => p.required).map((p) => p.name) }),
      headers: fc.record(Object.fromEntries(headerParams.map((p) => [p.name, validValue(doc, p.schema, known, p.name).map(String)])), {
        requiredKeys: headerParams.filter((p) => p.required).map((p) => p.name),
      }),
      json: op.body ? validValue(doc, op.body, known) : fc.constant(undefined),
    })
    .map(({ path, query, headers, json }) => ({
      path: path as Record<string, string>,
      query: inQuery.filter((p) => p.name in query).map((p) => [p.name, (query as Record<string, string>)[p.name]!] as [string, string]),
      headers: headers as Record<string, string>,
      json,
      chunked: false,
      mutations: [],
    }));
}

/**
 * Requests for one operation: valid ones from its schemas (with known ids and examples) and,
 * twice as often, valid ones with one or two mutations applied.
 */
export function requestsFor(doc: OpenApiDocument, op: Operation, known: Vocabulary): fc.Arbitrary<FuzzRequest> {
  const valid = validDraft(doc, op, known);
  const mutated = fc
    .tuple(valid, fc.array(mutationsFor(doc, op), { minLength: 1, maxLength: 2 }))
    .map(([draft, mutations]) => mutations.reduce(apply, draft));
  return fc.oneof({ arbitrary: valid, weight: 1 }, { arbitrary: mutated, weight: 2 }).map((draft) => withDescription(encode(op, draft)));
}
