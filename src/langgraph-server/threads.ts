import { jsonContains } from '../domain/json-contains.js';
import { END_NODE, type Checkpoint, type JsonObject, type Run, type Session } from '../domain/types.js';
import type { SessionLatest, ThreadRow } from '../ports/store.js';
import { assistantIdOf } from './assistants.js';
import { graphAgentOf, interruptsOf, nativeInterrupt, nativeTaskId, type ThreadStateDeps } from './thread-state.js';
import type { ThreadStatus } from './types.js';

/**
 * LangGraph threads over agentplane sessions: a thread is a session (`thread_id` = session
 * id), its status comes from the session's latest run, its values from its latest checkpoint
 * (a graph session's mirrors the graph's values), and a search is a bounded scan of the
 * tenant's newest sessions (THREAD_SCAN_LIMIT): nothing is indexed beyond what sessions have.
 */

/** A thread as LangGraph's server answers it. */
export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: JsonObject;
  status: ThreadStatus;
  values: JsonObject;
  interrupts: Record<string, unknown[]>;
  config: JsonObject;
  error: string | null;
}

/** The sessions a search or count looks at: the tenant's newest, by creation. */
export const THREAD_SCAN_LIMIT = 1000;
/** Sessions read per storage call while scanning. */
const SCAN_PAGE = 100;
/**
 * Threads whose latest checkpoint (up to SERVICE_MAX_STATE_BYTES each) is read at once, when a
 * filter, a sort or the page needs it: a search holds a few states at a time, not a scan page's.
 */
const STATE_READS = 8;
/** Threads whose latest run and checkpoint one storage call reads (their states up to a page's bytes). */
const PAGE_READS = 50;

/**
 * A thread's metadata: the session's, with `graph_id` of the agent its runs are bound to and
 * `assistant_id`, the assistant of its latest LangGraph run (recorded in the session's metadata
 * by the run), else the graph's default assistant (as LangGraph's server records the graph and
 * assistant a thread's runs use).
 */
export function threadMetadata(session: Pick<Session, 'agent_id' | 'metadata'>): JsonObject {
  if (session.agent_id === '') return session.metadata;
  const recorded = session.metadata.assistant_id;
  return { ...session.metadata, graph_id: session.agent_id, assistant_id: typeof recorded === 'string' ? recorded : assistantIdOf(session.agent_id) };
}

/** The reads a thread is made of, each done once and only when needed (a search filters on some, answers with all). */
export class ThreadFacts {
  private run?: Promise<Run | null>;
  private checkpoint?: Promise<Checkpoint | null>;
  /** The latest run and checkpoint read for many threads at once ({@link readLatest}). */
  private primed?: SessionLatest;

  constructor(
    private readonly deps: ThreadStateDeps,
    readonly tenant: string,
    readonly session: Session,
  ) {}

  /** Takes the latest run and checkpoint read for many threads at once ({@link readLatest}). */
  prime(latest: SessionLatest): void {
    this.run = Promise.resolve(latest.run);
    // A checkpoint left out (past the read's byte budget) is read on its own when asked.
    if (latest.checkpoint === undefined) return;
    this.primed = latest;
    this.checkpoint = Promise.resolve(latest.checkpoint);
  }

  /**
   * The thread from what {@link prime} gave, with no further read or promise (a search answers
   * dozens); undefined when it needs one: an interrupted thread (its interrupts), a graph run
   * whose stop is not the latest checkpoint.
   */
  primedThread(): Thread | undefined {
    if (!this.primed) return undefined;
    const { run } = this.primed;
    const checkpoint = this.primed.checkpoint ?? null;
    const status = this.statusOf(run, checkpoint);
    return status === undefined || status === 'interrupted' ? undefined : this.threadOf(status, checkpoint, run, {});
  }

  latestRun(): Promise<Run | null> {
    return (this.run ??= this.deps.store.runs.latestRun(this.tenant, this.session.id));
  }

  latestCheckpoint(): Promise<Checkpoint | null> {
    return (this.checkpoint ??= this.deps.store.sessions.getCheckpoint(this.tenant, this.session.id));
  }

  /** Lets go of the latest checkpoint read (a state may be large): read again if asked again. */
  forgetCheckpoint(): void {
    this.checkpoint = undefined;
    this.primed = undefined;
  }

  /**
   * From the latest run: queued or running → busy, paused at an approval → interrupted, failed
   * → error; a graph run that completed with nodes still planned (interrupt_before/after) →
   * interrupted, as at its end; otherwise (none, completed, cancelled) idle.
   */
  async status(): Promise<ThreadStatus> {
    const run = await this.latestRun();
    const known = this.statusOf(run, run?.status === 'completed' ? await this.latestCheckpoint() : null);
    if (known !== undefined) return known;
    // The graph run stopped at an older checkpoint than the latest (the state was edited since).
    const stopped = await this.deps.store.sessions.getCheckpoint(this.tenant, this.session.id, run!.seq_num);
    return stopped && stopped.node_id !== END_NODE ? 'interrupted' : 'idle';
  }

  /**
   * {@link status} from the latest run and checkpoint; undefined when it takes the checkpoint a
   * graph run stopped at and that is not the latest. (As LangGraph's server sets it when the
   * run ended: later state edits do not change it.)
   */
  private statusOf(run: Run | null, latest: Checkpoint | null): ThreadStatus | undefined {
    return statusFrom(run, latest, () => graphAgentOf(this.deps, this.session) !== undefined);
  }

  async values(): Promise<JsonObject> {
    return (await this.latestCheckpoint())?.state ?? {};
  }

  /** The interrupts an interrupted thread waits on, by task id; {} otherwise. */
  async interrupts(status: ThreadStatus): Promise<Record<string, unknown[]>> {
    if (status !== 'interrupted') return {};
    const graphId = graphAgentOf(this.deps, this.session);
    if (graphId) {
      const state = await this.deps.graphs!.threadState(this.tenant, this.session.id, graphId);
      return state ? interruptsOf(state) : {};
    }
    const [run, checkpoint] = await Promise.all([this.latestRun(), this.latestCheckpoint()]);
    const approval = run?.approval_id ? await this.deps.store.approvals.getApproval(this.tenant, run.approval_id) : null;
    if (approval?.status !== 'pending' || !checkpoint) return {};
    return { [nativeTaskId(checkpoint, approval.node_id)]: [nativeInterrupt(approval)] };
  }

  async thread(): Promise<Thread> {
    const [status, checkpoint, run] = await Promise.all([this.status(), this.latestCheckpoint(), this.latestRun()]);
    return this.threadOf(status, checkpoint, run, await this.interrupts(status));
  }

  private threadOf(status: ThreadStatus, checkpoint: Checkpoint | null, run: Run | null, interrupts: Record<string, unknown[]>): Thread {
    const { session } = this;
    return {
      thread_id: session.id,
      created_at: session.created_at,
      updated_at: session.updated_at,
      state_updated_at: checkpoint?.created_at ?? session.created_at,
      metadata: threadMetadata(session),
      status,
      values: checkpoint?.state ?? {},
      interrupts,
      config: {},
      error: status === 'error' ? (run?.error ?? null) : null,
    };
  }
}

/**
 * A thread's status from its latest run and checkpoint ({@link ThreadFacts.status}); undefined
 * when it takes the checkpoint a graph run stopped at and that is not the latest.
 */
function statusFrom(
  run: { status: Run['status']; seq_num?: number } | null,
  latest: { seq_num: number; node_id: string } | null,
  isGraph: () => boolean,
): ThreadStatus | undefined {
  switch (run?.status) {
    case 'queued':
    case 'running':
      return 'busy';
    case 'interrupted':
      return 'interrupted';
    case 'failed':
      return 'error';
    case 'completed':
      if (run.seq_num === undefined || !isGraph()) return 'idle';
      if (latest?.seq_num !== run.seq_num) return undefined;
      return latest.node_id !== END_NODE ? 'interrupted' : 'idle';
    default:
      return 'idle';
  }
}

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
  for await (const batch of matching(deps, tenant, search, firstPage)) {
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
 * The threads of a page, their JSON texts up to the page's bytes (UTF-8): `add` answers false
 * once a thread no longer fits (the first always does). Bytes are counted exactly only once
 * three bytes a character could pass the bound.
 */
class PageTexts {
  readonly ids: string[] = [];
  readonly texts: string[] = [];
  /** `[`, `]`, and a comma between two threads: exact once {@link exact}. */
  private bytes = 2;
  private exact = false;
  /** The same in characters (UTF-8 takes at most three bytes for one). */
  private chars = 2;

  constructor(readonly maxBytes: number) {}

  add(id: string, text: string): boolean {
    const comma = this.texts.length > 0 ? 1 : 0;
    this.chars += text.length + comma;
    if (!this.exact && this.chars * 3 > this.maxBytes) {
      this.exact = true;
      this.bytes = 2 + this.texts.reduce((sum, kept) => sum + Buffer.byteLength(kept), 0) + Math.max(0, this.texts.length - 1);
    }
    if (this.exact) {
      const size = Buffer.byteLength(text) + comma;
      if (this.texts.length > 0 && this.bytes + size > this.maxBytes) return false;
      this.bytes += size;
    }
    this.ids.push(id);
    this.texts.push(text);
    return true;
  }

  page(more: boolean): { ids: string[]; texts: string[]; more: boolean } {
    return { ids: this.ids, texts: this.texts, more };
  }
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

/** The session a thread row is. */
function sessionOf(tenant: string, row: ThreadRow): Session {
  return { id: row.id, agent_id: row.agent_id, tenant_id: tenant, created_at: row.created_at, updated_at: row.updated_at, metadata: JSON.parse(row.metadata) as JsonObject };
}

/** `JSON.stringify` of the {@link Thread} a row is with `status` (no interrupts), from its stored texts. */
function threadText(row: ThreadRow, status: ThreadStatus): string {
  const error = status === 'error' ? (row.run?.error ?? null) : null;
  return (
    `{"thread_id":${JSON.stringify(row.id)},"created_at":${JSON.stringify(row.created_at)},"updated_at":${JSON.stringify(row.updated_at)},` +
    `"state_updated_at":${JSON.stringify(row.checkpoint?.created_at ?? row.created_at)},"metadata":${metadataText(row)},"status":"${status}",` +
    `"values":${row.checkpoint?.state ?? '{}'},"interrupts":{},"config":{},"error":${JSON.stringify(error)}}`
  );
}

/** {@link metadataText} answers by agent and metadata text, while few (a list shows the same threads again and again). */
const metadataTexts = new Map<string, Map<string, string>>();
const METADATA_TEXTS = 4096;
let metadataTextsKept = 0;

/**
 * {@link threadMetadata} as JSON, from the session's metadata text: the graph's names appended
 * where the metadata has neither, else made from the parsed metadata once and kept.
 */
function metadataText(row: ThreadRow): string {
  const { metadata } = row;
  if (row.agent_id === '') return metadata;
  if (!metadata.includes('"graph_id"') && !metadata.includes('"assistant_id"')) {
    const names = `"graph_id":${JSON.stringify(row.agent_id)},"assistant_id":${JSON.stringify(assistantIdOf(row.agent_id))}}`;
    return metadata === '{}' ? `{${names}` : `${metadata.slice(0, -1)},${names}`;
  }
  let byText = metadataTexts.get(row.agent_id);
  let text = byText?.get(metadata);
  if (text === undefined) {
    text = JSON.stringify(threadMetadata({ agent_id: row.agent_id, metadata: JSON.parse(metadata) as JsonObject }));
    if (metadataTextsKept >= METADATA_TEXTS) {
      metadataTexts.clear();
      metadataTextsKept = 0;
      byText = undefined;
    }
    if (!byText) metadataTexts.set(row.agent_id, (byText = new Map()));
    byText.set(metadata, text);
    metadataTextsKept += 1;
  }
  return text;
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
async function* matching(deps: ThreadStateDeps, tenant: string, filter: ThreadFilter, firstPage = SCAN_PAGE): AsyncGenerator<ThreadFacts[]> {
  const { metadata } = filter;
  for await (const sessions of candidates(deps, tenant, filter.ids, firstPage)) {
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

/** The sessions named by `ids` (newest first), else pages of the tenant's newest sessions. */
async function* candidates(deps: ThreadStateDeps, tenant: string, ids: readonly string[] | undefined, firstPage: number): AsyncGenerator<Session[]> {
  if (ids) {
    const sessions = await Promise.all([...new Set(ids)].map((id) => deps.store.sessions.getSession(tenant, id)));
    yield sessions.filter((s): s is Session => s !== null).sort((a, b) => compare(b.created_at, a.created_at) || compare(b.id, a.id));
    return;
  }
  for (let offset = 0, size = Math.min(firstPage, SCAN_PAGE); offset < THREAD_SCAN_LIMIT; offset += size, size = SCAN_PAGE) {
    const limit = Math.min(size, THREAD_SCAN_LIMIT - offset);
    const page = await deps.store.sessions.listSessions(tenant, { offset, limit });
    if (page.length > 0) yield page;
    if (page.length < limit) return;
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
