import { Command, GraphRecursionError, Send } from '@langchain/langgraph';
import type { Pregel, StateSnapshot } from '@langchain/langgraph';
import { AppError, badRequest, isUnavailable, notFound } from '../domain/errors.js';
import { newId, nowIso } from '../domain/time.js';
import {
  clip,
  END_NODE,
  MAX_CUSTOM_EVENT_BYTES,
  MAX_STREAM_EVENT_BYTES,
  APPROVAL_TIMEOUT_ACTIONS,
  errorMessage,
  MAX_APPROVAL_EXPIRY_MS,
  MAX_PROMPT_CHARS,
  type Approval,
  type ApprovalTimeoutAction,
  type Checkpoint,
  type JsonObject,
  type Run,
  type RunJob,
  type Span,
} from '../domain/types.js';
import type { EndedNode } from '../ports/run-journal.js';
import type { EventBody } from '../runtime/run-lifecycle.js';
import type { RunSignals } from '../runtime/run-signals.js';
import type { GraphEngine, GraphEngineDeps, GraphRunInput, GraphSource, GraphStateEdit } from '../runtime/graph-engine.js';
import { tenantGraphStorage, withTenantStorage } from './graph-storage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any compiled graph, whatever its channels
type AnyGraph = Pregel<any, any>;

/** One interrupt of a paused graph, as LangGraph reports it. */
interface PendingInterrupt {
  id: string;
  value: unknown;
  node: string;
}

/** The stream modes the engine reads: task starts and ends (spans, node events), checkpoints (the state mirror), writer data and model tokens. */
const STREAM_MODES = ['tasks', 'checkpoints', 'custom', 'messages'] as const;
/** The LangGraph stream modes a run may publish for a LangGraph client (`messages-tuple` is `messages`). */
const LIBRARY_MODES: ReadonlySet<string> = new Set(['values', 'updates', 'messages', 'custom', 'debug', 'tasks', 'checkpoints']);

/** The approval id of a graph interrupt: the run id, then LangGraph's interrupt id (unique per interrupt). */
export function graphApprovalId(runId: string, interruptId: string): string {
  return `${runId}.${interruptId}`;
}

/**
 * JSON of graph values: LangChain messages (and other objects with `toDict`) as their
 * dictionaries, `{ ...data, type }`, as LangGraph's server shows them.
 */
export function toJson(value: unknown): unknown {
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, replaced: unknown) {
    const raw = this[key] as { toDict?: () => { type: string; data: Record<string, unknown> } } | null;
    if (raw !== null && typeof raw === 'object' && typeof raw.toDict === 'function') {
      const { type, data } = raw.toDict();
      return { ...data, type };
    }
    return replaced;
  });
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/** The session's `node_id` for a LangGraph checkpoint: its next nodes, comma-separated, or `__end__`. */
function nodeIdOf(next: readonly string[]): string {
  return next.length === 0 ? END_NODE : [...new Set(next)].join(',');
}

/** What an approval shows of an interrupt's value: a string, its prompt/question/description field, else its JSON. */
export function promptOf(value: unknown): string {
  if (typeof value === 'string') return clip(value, MAX_PROMPT_CHARS);
  if (value !== null && typeof value === 'object') {
    for (const field of ['prompt', 'question', 'description'] as const) {
      const text = (value as Record<string, unknown>)[field];
      if (typeof text === 'string' && text !== '') return clip(text, MAX_PROMPT_CHARS);
    }
  }
  return clip(JSON.stringify(toJson(value)) ?? 'null', MAX_PROMPT_CHARS);
}

/** An interrupt value's expiry (`expires_in_ms`, `on_timeout` fields of an object value), when valid. */
function expiryOf(value: unknown, askedAt: number): { expires_at?: string; on_timeout?: ApprovalTimeoutAction } {
  if (value === null || typeof value !== 'object') return {};
  const { expires_in_ms: expires, on_timeout: onTimeout } = value as Record<string, unknown>;
  if (typeof expires !== 'number' || !Number.isInteger(expires) || expires < 1 || expires > MAX_APPROVAL_EXPIRY_MS) return {};
  const action = typeof onTimeout === 'string' && (APPROVAL_TIMEOUT_ACTIONS as readonly string[]).includes(onTimeout) ? (onTimeout as ApprovalTimeoutAction) : 'reject';
  return { expires_at: new Date(askedAt + expires).toISOString(), on_timeout: action };
}

/**
 * Reads a stream as fast as it comes into a buffer and hands its chunks out in order. LangGraph
 * drops the chunks not yet read when a graph fails; the engine writes to storage per chunk, so
 * it reads them all first: a failed run still records every step before its failure.
 */
async function* buffered<T>(stream: AsyncIterable<T>): AsyncGenerator<{ chunk: T; at: string }> {
  /** Each chunk with when it came (a task's start and end times, however late they are handled). */
  const chunks: { chunk: T; at: string }[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const chunk of stream) {
        chunks.push({ chunk, at: nowIso() });
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wake?.();
    }
  })();
  for (;;) {
    if (chunks.length > 0) {
      yield chunks.shift()!;
      continue;
    }
    if (done) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  if (failure) throw failure.error;
}

/** Event data: JSON of at most `limit` bytes, else a note saying it was left out. */
function eventData(value: unknown, limit = MAX_CUSTOM_EVENT_BYTES): unknown {
  const json = toJson(value);
  const bytes = Buffer.byteLength(JSON.stringify(json) ?? 'null');
  return bytes <= limit ? json : { omitted: `${bytes} bytes of JSON, more than ${limit}` };
}

/**
 * The native checkpoints of a graph session mirror its LangGraph checkpoints of the root
 * namespace: each holds the graph's values as JSON, with the keys that changed as its patch.
 */
class StateMirror {
  private readonly known = new Map<string, string>();

  constructor(state: JsonObject) {
    for (const [key, value] of Object.entries(state)) this.known.set(key, JSON.stringify(value));
  }

  /** The patch that takes the mirrored state to `values`: changed keys, and null for removed ones. */
  patch(values: unknown): JsonObject {
    const json = (toJson(values) ?? {}) as JsonObject;
    const patch: JsonObject = {};
    const seen = new Set<string>();
    for (const [key, value] of Object.entries(json)) {
      seen.add(key);
      const text = JSON.stringify(value);
      if (this.known.get(key) !== text) {
        patch[key] = value;
        this.known.set(key, text);
      }
    }
    for (const key of this.known.keys()) {
      if (!seen.has(key) && this.known.get(key) !== 'null') {
        patch[key] = null;
        this.known.set(key, 'null');
      }
    }
    return patch;
  }
}

/**
 * The LangGraph engine: executes the run jobs of graph agents by streaming the compiled graph
 * with agentplane's checkpointer and store (`thread_id` = the session id, the run's abort
 * signal), under the same lifecycle as native runs. Per task of the root graph: `node_start`,
 * its span, `node_end`; per checkpoint: a native checkpoint mirroring the values; `custom`
 * events for `config.writer` data (`custom`) and chat model tokens (`messages`); every
 * `interrupt()` a pending approval; a re-delivered job continues from the last checkpoint.
 */
export function createGraphEngine(deps: GraphEngineDeps): GraphEngine {
  const { store, lifecycle, logger } = deps;

  const storageOf = (tenant: string) =>
    tenantGraphStorage({ tenant, checkpoints: deps.checkpoints, items: deps.items, retain: deps.retain, maxCheckpointBytes: deps.maxCheckpointBytes });

  const sourceOf = (agentId: string): GraphSource | undefined => deps.agents.get(agentId)?.graph;

  async function graphFor(source: GraphSource, tenant: string, config: Record<string, unknown>): Promise<AnyGraph> {
    const graph = (await source.load(config)) as AnyGraph;
    return withTenantStorage(graph, storageOf(tenant));
  }

  /** The recursion limit of a run: the graph's own (`withConfig`), else RUN_STEP_LIMIT; a client's `recursion_limit` only lowers it. */
  const recursionLimitOf = (graph: AnyGraph, asked = Infinity): number => Math.min(asked, (graph.config?.recursionLimit as number | undefined) ?? deps.stepLimit);

  async function current(tenant: string, runId: string): Promise<Run | undefined> {
    return (await store.runs.getRun(tenant, runId)) ?? undefined;
  }

  async function execute(job: RunJob, signals: RunSignals): Promise<Run | undefined> {
    const { tenant } = job;
    let run: Run;
    try {
      run = await store.runs.updateRun(tenant, job.run_id, { status: 'running', from: ['queued', 'running'] });
    } catch (error) {
      if (error instanceof AppError && (error.code === 'conflict' || error.code === 'not_found')) return undefined;
      throw error;
    }
    const controller = signals.open(run.id);
    try {
      return await drive(job, run, controller.signal);
    } catch (error) {
      if (isUnavailable(error)) throw error;
      logger.error({ err: error, run_id: run.id }, 'graph run failed outside its nodes');
      return (await lifecycle.end(tenant, run.id, { status: 'failed', error: errorMessage(error), from: ['running'] })) ?? current(tenant, run.id);
    } finally {
      signals.release(run.id, controller);
    }
  }

  async function drive(job: RunJob, run: Run, signal: AbortSignal): Promise<Run | undefined> {
    const { tenant } = job;
    const publish = (body: EventBody) => lifecycle.publish(tenant, run, body);
    const fail = async (message: string) =>
      (await lifecycle.end(tenant, run.id, { status: 'failed', error: message, from: ['running'] })) ?? current(tenant, run.id);
    const source = sourceOf(job.agent_id);
    if (!source) return fail(`Agent "${job.agent_id}" is not registered on this worker.`);

    // What the run was asked: its input or command, and a LangGraph client's run options.
    const asked = parseRunInput(await store.runs.getRunInput(tenant, run.id));
    // The thread's latest checkpoint is where the engine reads and goes on from; a client's
    // `checkpoint_id` (a fork) is where a fresh run starts, only.
    const { checkpoint_id: forkFrom, ...given } = asked.config?.configurable ?? {};
    const configurable = { ...given, thread_id: job.session_id, run_id: run.id };
    const graph = await graphFor(source, tenant, { configurable });
    const config = { configurable };
    /** The LangGraph stream modes a LangGraph client asked for: their chunks go out as `stream` events. */
    const wanted = new Set((asked.stream_mode ?? []).map((mode) => (mode === 'messages-tuple' ? 'messages' : mode)).filter((mode) => LIBRARY_MODES.has(mode)));
    // The first mirrored checkpoint writes every value; the state of a graph session is only ever
    // the graph's, so nothing needs reading first.
    const mirror = new StateMirror({});

    // What to stream: the run's input or command; a resume's answers; null to go on from the
    // last checkpoint (a re-delivered job whose run got that far, a session resumed).
    let input: unknown = null;
    /** The checkpoint the graph goes on from when it is not given new input: LangGraph streams it again, already recorded. */
    let resumedFrom: unknown;
    /** A run starting (not resumed, not taken over): it starts from the fork's checkpoint when one was given. */
    let fresh = false;
    if (job.approval_id) {
      const snapshot = await graph.getState(config);
      resumedFrom = snapshot.config?.configurable?.checkpoint_id;
      const resume: Record<string, unknown> = {};
      const unanswered: PendingInterrupt[] = [];
      const interrupts = interruptsOf(snapshot);
      for (const pending of interrupts) {
        const answer = answerOf(await store.approvals.getApproval(tenant, graphApprovalId(run.id, pending.id)));
        if (answer) resume[pending.id] = answer.value;
        else unanswered.push(pending);
      }
      // A pause on several interrupts resumes once each is answered.
      if (unanswered.length > 0) return pause(unanswered);
      if (Object.keys(resume).length > 0) {
        input = new Command({ resume });
      } else if (interrupts.length === 0) {
        // The state was edited during the pause: the new checkpoint's task asks afresh (another
        // interrupt id), and its first interrupt() takes the answer given.
        const answer = answerOf(await store.approvals.getApproval(tenant, job.approval_id));
        if (answer) input = new Command({ resume: answer.value });
      }
    } else {
      const saved = await storageOf(tenant).checkpointer.getTuple(config);
      const started = job.kind === 'resume' || (saved && (saved.metadata as Record<string, unknown> | undefined)?.run_id === run.id);
      if (started) resumedFrom = saved?.config.configurable?.checkpoint_id;
      else {
        input = streamInputOf(asked);
        fresh = true;
      }
    }

    // The graph stops when the run is cancelled, or when a write finds the run no longer running.
    const halt = new AbortController();
    const graphSignal = AbortSignal.any([signal, halt.signal]);
    /** Tasks of the root graph under way: their node and start. */
    const tasks = new Map<string, { node: string; start: string }>();
    /** Tasks of the root graph that returned since the last checkpoint: recorded with the next one. */
    const ended: EndedNode[] = [];
    /** The last checkpoint (nothing next): the run completes with it once the graph is done. */
    let last: { patch: JsonObject } | undefined;
    let next: string[] = [];
    let sawInterrupt = false;
    const span = (node: string, start: string, status: string, error?: string, end = nowIso()): Span => ({
      span_id: newId(),
      parent_id: run.id,
      name: node,
      start,
      end,
      attributes: { agent_id: run.agent_id, run_id: run.id, node_id: node, status, ...(error ? { error } : {}) },
    });
    /** The node a writer or model event came from: the metadata's node, else the one root task under way. */
    const nodeOf = (metadata?: Record<string, unknown>): string => {
      const named = metadata?.langgraph_node;
      if (typeof named === 'string') return named;
      return tasks.size === 1 ? [...tasks.values()][0]!.node : '';
    };
    /** Records what the step so far has not: tasks that returned, and tasks still open with `status`. */
    const flushTasks = async (status: string, error?: string) => {
      for (const done of ended.splice(0)) {
        await store.sessions.addSpan(tenant, job.session_id, done.span);
        await publish({ type: 'node_end', node: done.node, status: 'ok' });
      }
      for (const [id, task] of tasks) {
        tasks.delete(id);
        await store.sessions.addSpan(tenant, job.session_id, span(task.node, task.start, status, error));
        if (status === 'error') await publish({ type: 'node_end', node: task.node, status: 'error' });
      }
    };
    /** A step of the journal (checkpoint, spans, node events in one round trip); undefined when the run was cancelled. */
    const step = async (patch: JsonObject, nodeId: string, starts?: readonly string[]) => {
      try {
        const recorded = await deps.journal.step(tenant, run, { ended: ended.splice(0), patch, next: nodeId, ...(starts ? { starts } : {}) });
        lifecycle.counted(recorded.published);
        return recorded;
      } catch (error) {
        if (error instanceof AppError && error.code === 'conflict') return undefined;
        throw error;
      }
    };

    try {
      const stream = await graph.stream(input, {
        ...(fresh && typeof forkFrom === 'string' ? { configurable: { ...configurable, checkpoint_id: forkFrom } } : config),
        ...(asked.config?.tags ? { tags: asked.config.tags } : {}),
        ...(asked.config?.metadata ? { metadata: asked.config.metadata } : {}),
        ...(asked.context !== undefined && asked.context !== null ? { context: asked.context as Record<string, unknown> } : {}),
        ...(asked.interrupt_before ? { interruptBefore: asked.interrupt_before } : {}),
        ...(asked.interrupt_after ? { interruptAfter: asked.interrupt_after } : {}),
        signal: graphSignal,
        recursionLimit: recursionLimitOf(graph, asked.config?.recursion_limit),
        // Each checkpoint is stored before the next step starts: a step is announced (and
        // recorded) only once LangGraph has it, so a worker taking over never repeats a step.
        durability: 'sync',
        streamMode: [...new Set([...STREAM_MODES, ...wanted])] as (typeof STREAM_MODES)[number][],
        subgraphs: true,
      });
      for await (const { chunk, at } of buffered(stream as AsyncIterable<[string[], string, unknown]>)) {
        const [namespace, mode, data] = chunk;
        const root = namespace.length === 0;
        if (wanted.has(mode) && (root || asked.stream_subgraphs)) {
          await publish({ type: 'stream', name: root ? mode : `${mode}|${namespace.join('|')}`, data: eventData(data, MAX_STREAM_EVENT_BYTES) });
        }
        if (mode === 'tasks' && root) {
          const task = data as { id: string; name: string; input?: unknown; error?: unknown; interrupts?: unknown[] };
          if ('input' in task) {
            tasks.set(task.id, { node: task.name, start: at });
            continue;
          }
          const began = tasks.get(task.id);
          tasks.delete(task.id);
          const start = began?.start ?? at;
          if (task.error) {
            const message = errorMessage(task.error);
            await store.sessions.addSpan(tenant, job.session_id, span(task.name, start, 'error', message, at));
            await publish({ type: 'node_end', node: task.name, status: 'error' });
          } else if ((task.interrupts?.length ?? 0) > 0) {
            sawInterrupt = true;
            await store.sessions.addSpan(tenant, job.session_id, span(task.name, start, 'interrupted', undefined, at));
          } else {
            ended.push({ node: task.name, span: span(task.name, start, 'ok', undefined, at) });
          }
        } else if (mode === 'checkpoints' && root) {
          const checkpoint = data as { values: unknown; next: string[]; metadata?: { source?: string }; config?: { configurable?: { checkpoint_id?: unknown } } };
          next = checkpoint.next;
          // The run's first native checkpoint (at __start__) stands for LangGraph's input checkpoint.
          if (checkpoint.metadata?.source === 'input') continue;
          // The checkpoint a resumed or taken-over run goes on from is recorded already: only its tasks start again.
          if (resumedFrom !== undefined && checkpoint.config?.configurable?.checkpoint_id === resumedFrom) {
            resumedFrom = undefined;
            mirror.patch(checkpoint.values);
            for (const node of next) await publish({ type: 'node_start', node });
            continue;
          }
          const patch = mirror.patch(checkpoint.values);
          // Nothing next: the run completes with this checkpoint once the graph has stored it.
          if (next.length === 0) {
            last = { patch };
            continue;
          }
          if (!(await step(patch, nodeIdOf(next), next))) return stopped();
        } else if (mode === 'custom') {
          await publish({ type: 'custom', node: nodeOf(), name: 'custom', data: eventData(data) });
        } else if (mode === 'messages') {
          const [message, metadata] = data as [unknown, Record<string, unknown> | undefined];
          await publish({ type: 'custom', node: nodeOf(metadata), name: 'messages', data: eventData(message) });
        }
      }
    } catch (error) {
      // Cancelled (the run's signal, or a write refused once the run was no longer running).
      if (graphSignal.aborted || (error instanceof AppError && error.code === 'conflict')) return stopped();
      if (isUnavailable(error)) throw error;
      const message =
        error instanceof GraphRecursionError
          ? `The graph exceeded its step limit (recursionLimit ${recursionLimitOf(graph, asked.config?.recursion_limit)}): ${errorMessage(error)}`
          : errorMessage(error);
      await flushTasks('error', message);
      logger.warn({ err: error, run_id: run.id }, 'graph run failed');
      return fail(message);
    }
    if (signal.aborted) return stopped();

    if (sawInterrupt || (next.length > 0 && !last)) {
      const pending = interruptsOf(await graph.getState(config));
      if (pending.length > 0) {
        // Tasks that returned in the paused step keep their writes: they are not run again.
        await flushTasks('interrupted');
        return pause(pending);
      }
    }
    if (last) {
      const recorded = await step(last.patch, END_NODE);
      if (!recorded) return stopped();
      if (recorded.completed) return lifecycle.completedByStep(tenant, recorded.completed, recorded.scheduled ?? true);
    }
    // Stopped without a last checkpoint (an interrupt_before with nothing pending): the run completes as it is.
    await flushTasks('ok');
    return lifecycle.complete(tenant, run);

    /** The run was cancelled: the open tasks' spans say so; the canceller ended the run. */
    async function stopped(): Promise<Run | undefined> {
      halt.abort();
      await flushTasks('cancelled');
      return current(tenant, run.id);
    }

    /** The run pauses: one pending approval per interrupt (a run paused on several resumes once each is answered). */
    async function pause(interrupts: PendingInterrupt[]): Promise<Run | undefined> {
      let paused: Run | undefined;
      for (const pending of interrupts) {
        const askedAt = Date.now();
        let approvalId: string;
        try {
          const approval = await store.approvals.createApproval(tenant, {
            id: graphApprovalId(run.id, pending.id),
            session_id: job.session_id,
            run_id: run.id,
            agent_id: job.agent_id,
            node_id: pending.node,
            prompt: promptOf(pending.value),
            payload: toJson(pending.value),
            requested_at: new Date(askedAt).toISOString(),
            ...expiryOf(pending.value, askedAt),
          });
          approvalId = approval.id;
        } catch (error) {
          // The run was cancelled on the way.
          if (error instanceof AppError && error.code === 'conflict') return current(tenant, run.id);
          throw error;
        }
        await publish({ type: 'interrupted', node: pending.node, approval_id: approvalId });
        paused = { ...run, status: 'interrupted', approval_id: approvalId };
      }
      lifecycle.reached(tenant, paused!);
      await lifecycle.settled(tenant, paused!);
      return paused;
    }
  }

  async function updateState(tenant: string, sessionId: string, values: JsonObject, edit: GraphStateEdit = {}): Promise<Checkpoint> {
    const session = await store.sessions.getSession(tenant, sessionId);
    if (!session) throw notFound('The session');
    // A session no run has bound yet (a LangGraph thread before its first run) has no native checkpoint either.
    const agentId = session.agent_id || edit.agentId || '';
    const source = sourceOf(agentId);
    if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
    const latest = await store.sessions.getCheckpoint(tenant, sessionId);
    if (!latest && session.agent_id !== '') throw notFound('A checkpoint of this session');
    if (edit.ifSeq !== undefined && edit.ifSeq !== latest?.seq_num) {
      throw new AppError('precondition_failed', `The latest checkpoint is seq_num ${latest?.seq_num ?? 'none'}, not ${edit.ifSeq}.`);
    }
    const run = await store.runs.latestRun(tenant, sessionId);
    if (run?.status === 'running') throw new AppError('conflict', 'A run of this session is running.');
    const config = { configurable: { thread_id: sessionId } };
    const graph = await graphFor(source, tenant, config);
    try {
      await graph.updateState(edit.checkpointId ? { configurable: { ...config.configurable, checkpoint_id: edit.checkpointId } } : config, values, edit.asNode);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw badRequest(`The graph refused the update: ${errorMessage(error)}`);
    }
    const snapshot = await graph.getState(config);
    const written = await store.sessions.appendCheckpoint(tenant, sessionId, {
      patch: new StateMirror(latest?.state ?? {}).patch(snapshot.values),
      node_id: nodeIdOf(snapshot.next),
      ...(latest ? { ifSeq: latest.seq_num } : {}),
      rejectWhileRunning: true,
    });
    return (await store.sessions.getCheckpoint(tenant, sessionId, written.seq_num)) ?? { ...written, state: (toJson(snapshot.values) ?? {}) as JsonObject };
  }

  async function threadState(tenant: string, sessionId: string, agentId: string, read: { checkpointId?: string; subgraphs?: boolean } = {}): Promise<JsonObject | null> {
    const source = sourceOf(agentId);
    if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
    const configurable = { thread_id: sessionId, ...(read.checkpointId ? { checkpoint_id: read.checkpointId } : {}) };
    const graph = await graphFor(source, tenant, { configurable });
    const snapshot = await graph.getState({ configurable }, { subgraphs: read.subgraphs ?? false });
    // LangGraph answers an empty snapshot of the config asked for when it holds no checkpoint there.
    if (snapshot.createdAt === undefined) return null;
    return threadStateOf(snapshot);
  }

  async function threadHistory(
    tenant: string,
    sessionId: string,
    agentId: string,
    read: { limit: number; before?: string; checkpointId?: string; metadata?: Record<string, unknown> },
  ): Promise<JsonObject[]> {
    const source = sourceOf(agentId);
    if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
    const configurable = { thread_id: sessionId, ...(read.checkpointId ? { checkpoint_id: read.checkpointId } : {}) };
    const graph = await graphFor(source, tenant, { configurable });
    const states: JsonObject[] = [];
    const options = {
      limit: read.limit,
      ...(read.before ? { before: { configurable: { thread_id: sessionId, checkpoint_id: read.before } } } : {}),
      ...(read.metadata ? { filter: read.metadata } : {}),
    };
    for await (const snapshot of graph.getStateHistory({ configurable }, options)) states.push(threadStateOf(snapshot));
    return states;
  }

  async function copyThread(tenant: string, sessionId: string, toSessionId: string, agentId: string): Promise<void> {
    const source = sourceOf(agentId);
    if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
    await storageOf(tenant).checkpointer.copyThread(sessionId, toSessionId);
    const config = { configurable: { thread_id: toSessionId } };
    const snapshot = await (await graphFor(source, tenant, config)).getState(config);
    if (snapshot.createdAt === undefined) return;
    await store.sessions.appendCheckpoint(tenant, toSessionId, { patch: new StateMirror({}).patch(snapshot.values), node_id: nodeIdOf(snapshot.next) });
  }

  async function rollbackRun(tenant: string, sessionId: string, agentId: string, runId: string): Promise<void> {
    const source = sourceOf(agentId);
    if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
    if ((await storageOf(tenant).checkpointer.deleteRunCheckpoints(sessionId, runId)) === 0) return;
    const config = { configurable: { thread_id: sessionId } };
    const snapshot = await (await graphFor(source, tenant, config)).getState(config);
    const latest = await store.sessions.getCheckpoint(tenant, sessionId);
    const values = snapshot.createdAt === undefined ? {} : snapshot.values;
    await store.sessions.appendCheckpoint(tenant, sessionId, { patch: new StateMirror(latest?.state ?? {}).patch(values), node_id: nodeIdOf(snapshot.next) });
  }

  return { execute, updateState, threadState, threadHistory, copyThread, rollbackRun };
}

/** A LangGraph checkpoint reference as LangGraph's server shows it; null without one. */
function checkpointRefOf(config: { configurable?: Record<string, unknown> } | undefined): JsonObject | null {
  const configurable = config?.configurable;
  if (!configurable?.thread_id) return null;
  return {
    thread_id: String(configurable.thread_id),
    checkpoint_ns: typeof configurable.checkpoint_ns === 'string' ? configurable.checkpoint_ns : '',
    checkpoint_id: typeof configurable.checkpoint_id === 'string' ? configurable.checkpoint_id : null,
    checkpoint_map: (configurable.checkpoint_map as JsonObject | undefined) ?? null,
  };
}

/** A state snapshot as LangGraph's server shows a thread's state (`ThreadState`), JSON. */
export function threadStateOf(snapshot: StateSnapshot): JsonObject {
  return toJson({
    values: snapshot.values,
    next: snapshot.next,
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error != null ? errorMessage(task.error) : null,
      interrupts: task.interrupts ?? [],
      path: task.path ?? null,
      checkpoint: task.state && 'configurable' in task.state ? checkpointRefOf(task.state as { configurable?: Record<string, unknown> }) : null,
      state: task.state && 'values' in task.state ? threadStateOf(task.state) : null,
      result: task.result ?? null,
    })),
    metadata: snapshot.metadata ?? {},
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointRefOf(snapshot.config),
    parent_checkpoint: checkpointRefOf(snapshot.parentConfig),
  }) as JsonObject;
}

/** What an answered approval resumes its interrupt with: the `resume` given, else `{ approved, comment }`. */
function answerOf(approval: Approval | null): { value: unknown } | undefined {
  if (approval?.status !== 'approved' && approval?.status !== 'rejected') return undefined;
  return { value: approval.resume !== undefined ? approval.resume : { approved: approval.status === 'approved', comment: approval.comment ?? '' } };
}

/** The interrupts a paused graph waits on, each with the node that asked, in task order. */
function interruptsOf(snapshot: StateSnapshot): PendingInterrupt[] {
  const found: PendingInterrupt[] = [];
  for (const task of snapshot.tasks) {
    for (const pending of task.interrupts ?? []) {
      if (typeof pending.id === 'string') found.push({ id: pending.id, value: pending.value, node: task.name });
    }
  }
  return found;
}

/** A run's stored `graph_input`; nothing asked when it has none. */
function parseRunInput(stored: string | null): GraphRunInput {
  return stored === null ? {} : (JSON.parse(stored) as GraphRunInput);
}

/** What to stream for what a run was asked: its command as a LangGraph Command, else its input. */
function streamInputOf(asked: GraphRunInput): unknown {
  if (!asked.command) return asked.input ?? null;
  const { goto, ...rest } = asked.command;
  // A client's `goto` may name nodes, or send them input as `{ node, input }` (LangGraph's Send).
  const toSend = (target: unknown) =>
    target !== null && typeof target === 'object' && typeof (target as { node?: unknown }).node === 'string'
      ? new Send((target as { node: string }).node, (target as { input?: unknown }).input)
      : target;
  const targets = goto === undefined ? undefined : Array.isArray(goto) ? goto.map(toSend) : toSend(goto);
  return new Command({ ...rest, ...(targets === undefined ? {} : { goto: targets }) } as ConstructorParameters<typeof Command>[0]);
}
