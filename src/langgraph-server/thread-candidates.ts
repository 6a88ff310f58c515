import type { JsonObject, Session } from '../domain/types.js';
import type { SessionListOptions } from '../ports/paging.js';
import { metadataPair } from '../domain/metadata-pairs.js';
import { assistantIdOf } from './assistants.js';
import type { ThreadStateDeps } from './thread-state.js';

/** Sessions read per storage call while scanning or reading an index. */
export const SCAN_PAGE = 100;

/** Where candidates of a metadata filter come from: a session list read by metadata pair, by agent, or the metadata overflow list. */
type Source = Pick<SessionListOptions, 'metadata' | 'agent_id' | 'metadataOverflow'>;

/** The sessions whose metadata has more pairs than the index takes for one: every lookup reads them too. */
const OVERFLOW: Source = { metadataOverflow: true };

/**
 * The session lists that together hold every thread a metadata filter can match, newest first,
 * or undefined when no key of the filter has a value the index holds (a string, number, boolean
 * or null, the pair short enough: the filter is then checked on a scan). A key of the session's
 * own metadata reads its pair's list (the first such key of the filter). `graph_id` and
 * `assistant_id` are the thread's: a bound session's `graph_id` is its agent (the agent's
 * list), an unbound one's is its metadata's; its `assistant_id` is recorded by its runs in its
 * metadata, else the default assistant of its agent (that agent's list). The overflow list goes
 * with every lookup. The lists only narrow the scan: every candidate is checked against the
 * whole filter.
 */
export function metadataSources(deps: ThreadStateDeps, metadata: JsonObject | undefined): Source[] | undefined {
  const entries = Object.entries(metadata ?? {}).filter(([key, value]) => metadataPair(key, value) !== undefined) as [string, string | number | boolean | null][];
  const own = entries.find(([key]) => key !== 'graph_id' && key !== 'assistant_id');
  if (own) return [{ metadata: { key: own[0], value: own[1] } }, OVERFLOW];
  const graph = entries.find(([key]) => key === 'graph_id');
  if (graph) return [{ metadata: { key: 'graph_id', value: graph[1] } }, ...(typeof graph[1] === 'string' ? [{ agent_id: graph[1] }] : []), OVERFLOW];
  const assistant = entries.find(([key]) => key === 'assistant_id');
  if (!assistant) return undefined;
  const id = assistant[1];
  const agents = typeof id === 'string' ? deps.agents.list().filter((agent) => assistantIdOf(agent.id) === id.toLowerCase()) : [];
  return [{ metadata: { key: 'assistant_id', value: id } }, ...agents.map((agent) => ({ agent_id: agent.id })), OVERFLOW];
}

/** A list of sessions newest first, read a page at a time (fewer than `limit`: its end). */
export type SessionReader = (offset: number, limit: number) => Promise<Session[]>;

/** Active runs read for a status filter at most (the tenant's queued, running and paused runs). */
const ACTIVE_RUNS_READ = 100_000;

/**
 * The session lists that hold every thread of a status, or undefined for a status no index
 * finds (`idle`, `error`: the caller scans). A thread is `busy` while its latest run is queued
 * or running and `interrupted` while it waits on an approval: that run is among the tenant's
 * active runs, read whole (they are bounded by what runs and waits). A graph thread is also
 * `interrupted` when its last run completed before the end (interrupt_before / after), which no
 * run status says: `scan` (the bounded scan of the newest sessions) is read beside for those.
 */
export async function statusSources(deps: ThreadStateDeps, tenant: string, status: string | undefined, scan: SessionReader): Promise<SessionReader[] | undefined> {
  const runStatuses = status === 'busy' ? (['queued', 'running'] as const) : status === 'interrupted' ? (['interrupted'] as const) : undefined;
  if (!runStatuses) return undefined;
  const ids = new Set<string>();
  for (const runStatus of runStatuses) {
    for (const run of await deps.store.runs.findRuns(tenant, { status: runStatus, offset: 0, limit: ACTIVE_RUNS_READ })) ids.add(run.session_id);
  }
  const sessions = (await Promise.all([...ids].map((id) => deps.store.sessions.getSession(tenant, id))))
    .filter((session): session is Session => session !== null)
    .sort(newestFirst);
  const active: SessionReader = async (offset, limit) => sessions.slice(offset, offset + limit);
  return status === 'interrupted' ? [active, scan] : [active];
}

/** Newest first: created_at, then id, both descending (the order of the session lists). */
const newer = (a: Session, b: Session): boolean => a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);

/** A sort comparator of sessions, newest first ({@link newer}). */
export const newestFirst = (a: Session, b: Session): number => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0);

/**
 * The sessions of `sources`, merged newest first without repeats, a page at a time, at most
 * `bound` in all: each list is read a storage page at a time as the merge needs it.
 */
export async function* mergedSources(deps: ThreadStateDeps, tenant: string, sources: readonly (Source | SessionReader)[], bound: number): AsyncGenerator<Session[]> {
  const lists = sources.map((source) => ({
    read: typeof source === 'function' ? source : (offset: number, limit: number) => deps.store.sessions.listSessions(tenant, { ...source, offset, limit }),
    offset: 0,
    buffer: [] as Session[],
    done: false,
  }));
  const seen = lists.length > 1 ? new Set<string>() : undefined;
  let given = 0;
  for (;;) {
    await Promise.all(
      lists.map(async (list) => {
        if (list.buffer.length > 0 || list.done) return;
        const page = await list.read(list.offset, SCAN_PAGE);
        list.offset += page.length;
        list.buffer = page;
        list.done = page.length < SCAN_PAGE;
      }),
    );
    const batch: Session[] = [];
    // The newest head while every list that may hold more has one buffered (else refill first).
    while (batch.length < SCAN_PAGE && given < bound && lists.every((list) => list.buffer.length > 0 || list.done)) {
      let from: (typeof lists)[number] | undefined;
      for (const list of lists) if (list.buffer.length > 0 && (!from || newer(list.buffer[0]!, from.buffer[0]!))) from = list;
      if (!from) break;
      const session = from.buffer.shift()!;
      if (seen?.has(session.id)) continue;
      seen?.add(session.id);
      batch.push(session);
      given += 1;
    }
    if (batch.length > 0) yield batch;
    if (given >= bound || lists.every((list) => list.done && list.buffer.length === 0)) return;
  }
}
