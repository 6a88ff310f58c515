import { END_NODE, type Checkpoint, type JsonObject, type Run, type Session } from '../domain/types.js';
import type { SessionLatest } from '../ports/store.js';
import { assistantIdOf } from './assistants.js';
import { graphAgentOf, interruptsOf, nativeInterrupt, nativeTaskId, type ThreadStateDeps } from './thread-state.js';
import type { ThreadStatus } from './types.js';

/**
 * A LangGraph thread over an agentplane session: a thread is a session (`thread_id` = session
 * id), its status comes from the session's latest run, its values from its latest checkpoint
 * (a graph session's mirrors the graph's values).
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
export function statusFrom(
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
