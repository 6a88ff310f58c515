import { jsonContains } from '../domain/json-contains.js';
import type { JsonObject, Session } from '../domain/types.js';
import { graphAgentOf, type ThreadStateDeps } from './thread-state.js';
import { statusFrom, ThreadFacts, threadMetadata, type Thread } from './thread-facts.js';
import { PageTexts, sessionOf, threadText } from './thread-rows.js';
import type { ThreadStatus } from './types.js';
import { mergedSources, metadataSources, newestFirst, SCAN_PAGE, statusSources, type SessionReader } from './thread-candidates.js';

/**
 * LangGraph threads over agentplane sessions: a thread is a session (`thread_id` = session
 * id), its status comes from the session's latest run, its values from its latest checkpoint
 * (a graph session's mirrors the graph's values). A search or count with a metadata filter
 * reads its candidates from the metadata indexes (thread-candidates.ts: every matching thread),
 * one by `busy` or `interrupted` from the tenant's active runs; other filters (`idle`, `error`,
 * values) are checked on a bounded scan of the tenant's newest sessions (THREAD_SCAN_LIMIT).
 */

/**
 * The sessions a search or count without a usable metadata filter looks at: the tenant's
 * newest, by creation; and, sorted otherwise than newest first, the candidates sorted.
 */
export const THREAD_SCAN_LIMIT = 1000;
/**
 * Threads whose latest checkpoint (up to SERVICE_MAX_STATE_BYTES each) is read at once, when a
 * filter, a sort or the page needs it: a search holds a few states at a time, not a scan page's.
 */
const STATE_READS = 8;
/** Threads whose latest run and checkpoint one storage call reads (their states up to a page's bytes). */
const PAGE_READS = 50;

/** What a thread must match: each filter given (metadata and values by JSON containment). */
export interface ThreadFilter {
  ids?: readonly string[];
  metadata?: JsonObject;
  values?: JsonObject;
  status?: ThreadStatus;
}

export interface ThreadSearch extends ThreadFilter {
  limit: number;
  offset: number;
  sort_by: 'thread_id' | 'status' | 'created_at' | 'updated_at' | 'state_updated_at';
  sort_order: 'asc' | 'desc';
  /** Only these fields of each thread. */
  select?: readonly string[];
}

/**
 * One page of the tenant's threads matching `search`, sorted, each with the fields selected;
 * `more` when a next page may hold more (the next page starts at `offset` + the threads
 * answered). Without `ids` only the newest THREAD_SCAN_LIMIT sessions are looked at; sorted by
 * `created_at` descending (the default) the scan stops once the page is full. A page also
 * stops before its JSON would pass SERVICE_MAX_PAGE_BYTES (UTF-8), as a history page does: one
 * thread always fits, and `more` says where to go on. `texts` holds each thread's JSON, made once
 * to measure it: an answer sends `[texts joined by commas]` rather than serializing again.
 */
export async function searchThreads(deps: ThreadStateDeps, tenant: string, search: ThreadSearch): Promise<{ ids: string[]; texts: string[]; more: boolean }> {
  const inScanOrder = search.sort_by === 'created_at' && search.sort_order === 'desc';
  const wanted = search.offset + search.limit;
  // Newest first with no filter to apply: the first storage page need hold no more than one past this page.
  const unfiltered = !search.ids && !search.metadata && !search.values && !search.status;
  if (inScanOrder && unfiltered && !search.select) return newestThreads(deps, tenant, search);
  const found: ThreadFacts[] = [];
  const firstPage = inScanOrder && unfiltered ? wanted + 1 : SCAN_PAGE;
  // Sorted otherwise than newest first, the newest THREAD_SCAN_LIMIT candidates are sorted.
  for await (const batch of matching(deps, tenant, search, firstPage, inScanOrder ? Number.POSITIVE_INFINITY : THREAD_SCAN_LIMIT)) {
    found.push(...batch);
    // One past the page tells whether another page follows.
    if (inScanOrder && found.length > wanted) break;
  }
  const sorted = inScanOrder ? found : await sortedBy(deps, tenant, found, search.sort_by, search.sort_order);
  const page = sorted.slice(search.offset, wanted);
  const answer = new PageTexts(deps.config.SERVICE_MAX_PAGE_BYTES);
  for (let at = 0; at < page.length; at += PAGE_READS) {
    // One read for up to PAGE_READS threads, their states up to a page's bytes; the others'
    // states are read STATE_READS at a time below.
    await readLatest(deps, tenant, page.slice(at, at + PAGE_READS), answer.maxBytes);
    for (let part = at; part < Math.min(at + PAGE_READS, page.length); part += STATE_READS) {
      const facts = page.slice(part, Math.min(part + STATE_READS, at + PAGE_READS));
      // Threads the one read answered are built as they are; the others read what they lack.
      const primed = facts.map((thread) => thread.primedThread());
      const built = primed.every((thread) => thread !== undefined) ? (primed as Thread[]) : await Promise.all(facts.map((thread, i) => primed[i] ?? thread.thread()));
      for (const thread of built) {
        if (!answer.add(thread.thread_id, JSON.stringify(selected(thread, search.select)))) return answer.page(true);
      }
      for (const thread of facts) thread.forgetCheckpoint();
    }
  }
  return answer.page(sorted.length > wanted);
}

/**
 * The newest threads with nothing to filter, sort or select (a thread list's first read): the
 * sessions with their latest runs and states in one storage read, each thread's JSON put
 * together from the stored metadata and state texts as they are. A thread that needs more (its
 * interrupts, the checkpoint its run stopped at, a state past the read's bytes) is read whole.
 */
async function newestThreads(deps: ThreadStateDeps, tenant: string, search: ThreadSearch): Promise<{ ids: string[]; texts: string[]; more: boolean }> {
  const answer = new PageTexts(deps.config.SERVICE_MAX_PAGE_BYTES);
  // Only the newest THREAD_SCAN_LIMIT sessions, as a scan looks at; one past the page tells whether another follows.
  const limit = Math.min(search.offset + search.limit + 1, THREAD_SCAN_LIMIT) - search.offset;
  if (limit <= 0) return answer.page(false);
  const rows = await deps.store.listThreadRows(tenant, { offset: search.offset, limit }, answer.maxBytes);
  for (const row of rows.slice(0, search.limit)) {
    const status = row.checkpoint === undefined ? undefined : statusFrom(row.run, row.checkpoint, () => graphAgentOf(deps, { agent_id: row.agent_id, metadata: {} }) !== undefined);
    const text =
      status !== undefined && status !== 'interrupted' && row.checkpoint !== undefined
        ? threadText(row, status)
        : JSON.stringify(await new ThreadFacts(deps, tenant, sessionOf(tenant, row)).thread());
    if (!answer.add(row.id, text)) return answer.page(true);
  }
  return answer.page(rows.length > search.limit);
}

/** The latest run and checkpoint of each thread, in one storage call for all (not two reads a thread). */
async function readLatest(deps: ThreadStateDeps, tenant: string, threads: readonly ThreadFacts[], maxStateBytes: number): Promise<void> {
  const latest = await deps.store.latestOfSessions(tenant, threads.map((thread) => thread.session.id), maxStateBytes);
  threads.forEach((thread, i) => thread.prime(latest[i]!));
}

/** The fields of a thread named by `select`, all without it. */
function selected(thread: Thread, select: readonly string[] | undefined): JsonObject {
  const fields = thread as unknown as JsonObject;
  return select ? Object.fromEntries(Object.entries(fields).filter(([field]) => select.includes(field))) : fields;
}

/** How many of the tenant's threads match `filter` (among the newest THREAD_SCAN_LIMIT without `ids`). */
export async function countThreads(deps: ThreadStateDeps, tenant: string, filter: ThreadFilter): Promise<number> {
  let count = 0;
  for await (const batch of matching(deps, tenant, filter)) count += batch.length;
  return count;
}

/** The threads matching `filter`, a storage page of candidates at a time (in their order). */
async function* matching(deps: ThreadStateDeps, tenant: string, filter: ThreadFilter, firstPage = SCAN_PAGE, bound = Number.POSITIVE_INFINITY): AsyncGenerator<ThreadFacts[]> {
  const { metadata } = filter;
  for await (const sessions of candidates(deps, tenant, filter, firstPage, bound)) {
    const facts = sessions.map((session) => new ThreadFacts(deps, tenant, session));
    // Only a status or values filter reads a thread's run or checkpoint; metadata is the session's.
    if (filter.status || filter.values) {
      const matched = await inBatches(deps, tenant, facts, (thread) => matches(thread, filter));
      yield facts.filter((_, i) => matched[i]);
    } else {
      yield metadata ? facts.filter((thread) => jsonContains(threadMetadata(thread.session), metadata)) : facts;
    }
  }
}

/**
 * `read` of each thread, STATE_READS at a time, each thread's checkpoint let go of after its
 * read: a scan holds a few states at once, never all it looked at.
 */
async function inBatches<T>(deps: ThreadStateDeps, tenant: string, threads: readonly ThreadFacts[], read: (thread: ThreadFacts) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let at = 0; at < threads.length; at += STATE_READS) {
    const batch = threads.slice(at, at + STATE_READS);
    await readLatest(deps, tenant, batch, deps.config.SERVICE_MAX_PAGE_BYTES);
    out.push(...(await Promise.all(batch.map(read))));
    for (const thread of batch) thread.forgetCheckpoint();
  }
  return out;
}

async function matches(thread: ThreadFacts, filter: ThreadFilter): Promise<boolean> {
  if (filter.metadata && !jsonContains(threadMetadata(thread.session), filter.metadata)) return false;
  if (filter.status && (await thread.status()) !== filter.status) return false;
  return !filter.values || jsonContains(await thread.values(), filter.values);
}

/**
 * The sessions named by `ids` (newest first); else those of the metadata indexes a filter can
 * use (every one, newest first, up to `bound`); else pages of the tenant's newest
 * THREAD_SCAN_LIMIT sessions.
 */
async function* candidates(deps: ThreadStateDeps, tenant: string, filter: ThreadFilter, firstPage: number, bound: number): AsyncGenerator<Session[]> {
  if (filter.ids) {
    const sessions = await Promise.all([...new Set(filter.ids)].map((id) => deps.store.sessions.getSession(tenant, id)));
    yield sessions.filter((s): s is Session => s !== null).sort(newestFirst);
    return;
  }
  const sources = metadataSources(deps, filter.metadata);
  if (sources) {
    yield* mergedSources(deps, tenant, sources, bound);
    return;
  }
  /** The tenant's newest THREAD_SCAN_LIMIT sessions. */
  const scan: SessionReader = async (offset, limit) =>
    offset >= THREAD_SCAN_LIMIT ? [] : deps.store.sessions.listSessions(tenant, { offset, limit: Math.min(limit, THREAD_SCAN_LIMIT - offset) });
  const byStatus = await statusSources(deps, tenant, filter.status, scan);
  if (byStatus) {
    yield* mergedSources(deps, tenant, byStatus, bound);
    return;
  }
  for (let offset = 0, size = Math.min(firstPage, SCAN_PAGE); offset < THREAD_SCAN_LIMIT; offset += size, size = SCAN_PAGE) {
    const page = await scan(offset, size);
    if (page.length > 0) yield page;
    if (page.length < Math.min(size, THREAD_SCAN_LIMIT - offset)) return;
  }
}

async function sortedBy(deps: ThreadStateDeps, tenant: string, threads: ThreadFacts[], by: ThreadSearch['sort_by'], order: ThreadSearch['sort_order']): Promise<ThreadFacts[]> {
  const keys = by === 'status' || by === 'state_updated_at' ? await inBatches(deps, tenant, threads, (thread) => sortKey(thread, by)) : await Promise.all(threads.map((thread) => sortKey(thread, by)));
  const sign = order === 'asc' ? 1 : -1;
  return threads
    .map((thread, i) => ({ thread, key: keys[i]! }))
    .sort((a, b) => sign * (compare(a.key, b.key) || compare(a.thread.session.id, b.thread.session.id)))
    .map(({ thread }) => thread);
}

async function sortKey(thread: ThreadFacts, by: ThreadSearch['sort_by']): Promise<string> {
  switch (by) {
    case 'status':
      return thread.status();
    case 'thread_id':
      return thread.session.id;
    case 'state_updated_at':
      return (await thread.latestCheckpoint())?.created_at ?? thread.session.created_at;
    default:
      return thread.session[by];
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
