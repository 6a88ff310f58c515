import { send } from './client.js';
import { matchPath, splitTarget, type Operation } from './document.js';
import type { FuzzRequest } from './draft.js';

/** The observable store state a write may touch: read answer by read target. */
export type Snapshot = Map<string, string>;

/**
 * Takes snapshots of what the API shows, before and after a write, with the document's own
 * reads: every listing (`GET /api/…` without required parameters: sessions, approvals,
 * schedules…), every session-scoped read (`GET /api/…?session_id=`: state, history, runs,
 * traces) of the canary sessions and of the session the write names, and every `GET` on the
 * same path parameters as the write (`DELETE /api/schedules/{id}` → `GET /api/schedules/{id}`).
 */
export class Snapshots {
  private readonly listings: string[];
  private readonly perSession: Operation[];
  private readonly perPath: Operation[];

  constructor(
    private readonly url: string,
    operations: readonly Operation[],
    private readonly canarySessions: readonly string[],
  ) {
    const reads = operations.filter((op) => op.method === 'GET' && op.path.startsWith('/api/') && !op.streams && op.doc.responses['200']);
    const required = (op: Operation) => op.parameters.filter((p) => p.required);
    this.listings = reads.filter((op) => required(op).length === 0).map((op) => withPage(op, op.path));
    this.perSession = reads.filter((op) => required(op).length === 1 && required(op)[0]!.name === 'session_id' && required(op)[0]!.in === 'query');
    this.perPath = reads.filter((op) => op.parameters.some((p) => p.in === 'path'));
  }

  /** The snapshot relevant to `req`, a request of the write `op`. */
  async take(op: Operation, req: FuzzRequest): Promise<Snapshot> {
    const [path, query = ''] = splitTarget(req.target);
    const named = new URLSearchParams(query);
    const sessions = new Set(this.canarySessions);
    for (const name of ['session_id', 'session']) for (const v of named.getAll(name)) sessions.add(v);
    const bodySession = sessionInBody(req);
    if (bodySession) sessions.add(bodySession);
    const targets = [...this.listings];
    for (const id of sessions) {
      if (id.length > 200) continue;
      // The newest page is enough: a write appends (checkpoints, runs, spans) at the top.
      for (const op of this.perSession) targets.push(withPage(op, `${op.path}?session_id=${encodeURIComponent(id)}`, 10));
    }
    const values = matchPath(op.path, path) ?? {};
    for (const read of this.perPath) {
      const names = read.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      if (!names.every((name) => values[name] !== undefined && values[name] !== '' && values[name].length <= 200)) continue;
      targets.push(read.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(values[name]!)));
    }
    const answers = await Promise.all(
      targets.map(async (target) => {
        const res = await send(this.url, { method: 'GET', target, headers: {}, chunked: false, mutations: [] }).catch((error: Error) => {
          throw new Error(`snapshot read GET ${target}: ${error.message}`);
        });
        return [target, `${res.status} ${res.text}`] as const;
      }),
    );
    return new Map(answers);
  }
}

/** The first read whose answer differs between two snapshots, around where it differs; undefined when none does. */
export function firstDifference(before: Snapshot, after: Snapshot): string | undefined {
  for (const [target, answer] of before) {
    const later = after.get(target) ?? '(not read)';
    if (later === answer) continue;
    let at = 0;
    while (at < answer.length && answer[at] === later[at]) at++;
    const around = (text: string) => JSON.stringify(`${at > 80 ? '…' : ''}${text.slice(Math.max(0, at - 80), at + 240)}`);
    return `GET ${target}, from character ${at}: before ${around(answer)}; after ${around(later)}`;
  }
  return undefined;
}

/** Adds `limit=` when the read pages: `size`, or the largest page it allows. */
function withPage(op: Operation, target: string, size?: number): string {
  const limit = op.parameters.find((p) => p.name === 'limit' && p.in === 'query');
  if (!limit) return target;
  const max = typeof limit.schema === 'object' ? limit.schema.maximum : undefined;
  const value = size ?? (typeof max === 'number' ? max : undefined);
  return value === undefined ? target : `${target}${target.includes('?') ? '&' : '?'}limit=${value}`;
}

function sessionInBody(req: FuzzRequest): string | undefined {
  if (!req.body || req.body.length > 64 * 1024) return undefined;
  try {
    const body = JSON.parse(req.body.toString('utf8')) as { session_id?: unknown };
    return typeof body?.session_id === 'string' ? body.session_id : undefined;
  } catch {
    return undefined;
  }
}
