import fc from 'fast-check';
import { getJson, send, type FuzzResponse } from './client.js';
import { operationsOf, type OpenApiDocument, type Operation } from './document.js';
import { DocumentRules } from './invariants.js';
import { describeRequest, type FuzzRequest } from './draft.js';
import { requestsFor } from './requests.js';
import { firstDifference, Snapshots } from './snapshot.js';
import { Vocabulary } from './values.js';

/** A running app as the fuzzer sees it: its served document and what it learned from it. */
export interface FuzzTarget {
  url: string;
  doc: OpenApiDocument;
  operations: Operation[];
  rules: DocumentRules;
  /** Ids and examples; ids of the app's 2xx answers are added while fuzzing. */
  known: Vocabulary;
  snapshots: Snapshots;
  /** The app's log lines, when it runs in this process: a 5xx report quotes the logged error. */
  logs?: readonly Record<string, unknown>[];
}

/**
 * Reads `/swagger/doc.json` of the app at `url` and learns its examples, then ids from every
 * listing and from the session-scoped reads of `sessions` (the seeded ones, which are also the
 * canaries of the snapshots).
 */
export async function loadTarget(url: string, sessions: readonly string[], logs?: readonly Record<string, unknown>[]): Promise<FuzzTarget> {
  const served = await getJson(url, '/swagger/doc.json');
  if (served.status !== 200) throw new Error(`GET /swagger/doc.json answered ${served.status}`);
  const doc = served.body as OpenApiDocument;
  const operations = operationsOf(doc);
  const known = new Vocabulary();
  known.learnExamples(doc);
  for (const session of sessions) known.addId('session_id', session);
  for (const op of operations) {
    if (op.method !== 'GET' || op.streams || !op.path.startsWith('/api/') || op.parameters.some((p) => p.in === 'path')) continue;
    const required = op.parameters.filter((p) => p.required);
    if (required.length === 0) known.harvest((await getJson(url, op.path)).body);
    else if (required.length === 1 && required[0]!.name === 'session_id') {
      for (const session of sessions) known.harvest((await getJson(url, `${op.path}?session_id=${encodeURIComponent(session)}`)).body);
    }
  }
  return { url, doc, operations, rules: new DocumentRules(doc), known, snapshots: new Snapshots(url, operations, sessions), logs };
}

/**
 * The fuzz property of one operation: for a generated request (valid or mutated), the answer
 * keeps every invariant of {@link exchange}.
 */
export function fuzzProperty(target: FuzzTarget, op: Operation): fc.IAsyncPropertyWithHooks<[FuzzRequest]> {
  return fc.asyncProperty(requestsFor(target.doc, op, target.known), async (req) => {
    const { problems, report } = await exchange(target, op, req);
    if (problems.length > 0) throw new Error(report);
  });
}

/**
 * Sends one request of `op` and checks the answer: never a 5xx; a 4xx is the contract's error
 * body with a known code; a 2xx matches the documented schema of its status and never answers
 * a request the document rejects; a kept-alive connection still answers the next request; a
 * write answered 4xx leaves everything the API shows as it was. `report` describes the
 * request, the answer and each problem.
 */
export async function exchange(target: FuzzTarget, op: Operation, req: FuzzRequest): Promise<{ problems: string[]; report: string }> {
  const write = op.method !== 'GET';
  const before = write ? await target.snapshots.take(op, req) : undefined;
  let res: FuzzResponse;
  try {
    res = await send(target.url, req, { checkConnection: true });
  } catch (error) {
    const problem = `no answer: ${(error as Error).message}`;
    return { problems: [problem], report: `${describeRequest(req)}\n→ ${problem}` };
  }
  const problems = target.rules.check(op, req, res);
  if (res.status >= 200 && res.status < 300 && String(res.headers['content-type']).startsWith('application/json')) {
    target.known.harvest(JSON.parse(res.text));
  }
  if (before && res.status >= 400 && res.status < 500) {
    const difference = firstDifference(before, await target.snapshots.take(op, req));
    if (difference) problems.push(`the write was rejected (${res.status}) but changed what the API shows: ${difference}`);
  }
  const body = res.text.length > 400 ? `${res.text.slice(0, 400)}…` : res.text;
  const report = [describeRequest(req), `→ ${res.status} ${body}`, ...problems.map((p) => `  - ${p}`), ...loggedError(target, res)].join('\n');
  return { problems, report };
}

/** The error the app logged for a 5xx answer (matched by request id), first lines of its stack. */
function loggedError(target: FuzzTarget, res: FuzzResponse): string[] {
  if (res.status < 500 || !target.logs) return [];
  const id = res.headers['x-request-id'];
  const line = target.logs.find((l) => l.requestId === id && typeof l.err === 'object');
  const stack = String((line?.err as { stack?: unknown } | undefined)?.stack ?? '');
  return stack ? ['  logged:', ...stack.split('\n').slice(0, 6).map((l) => `    ${l.trim()}`)] : [];
}
