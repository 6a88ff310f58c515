import { AppError, badRequest, conflict, notFound } from '../domain/errors.js';
import { queueFull, shareOf } from '../domain/fair-share.js';
import { checkRunMetadata } from '../domain/session-metadata.js';
import { newId } from '../domain/time.js';
import type { JsonObject, Principal, Run } from '../domain/types.js';
import type { StartRunRequest } from '../ports/run-control.js';
import { isGraphAgent, type Agent } from '../runtime/agent.js';
import { resolveAssistant, withAssistant, type Assistant } from './assistants.js';
import type { LangGraphDeps } from './deps.js';
import { activeRuns, rollbackActiveRuns } from './run-rollback.js';
import { REPLACED_ERROR, RESUMED_ERROR } from './run-json.js';
import { definedOf, multitaskOf, type RunCreate, type RunRecord, type StreamMode } from './types.js';

type StartDeps = Pick<LangGraphDeps, 'store' | 'runs' | 'agents' | 'assistants' | 'graphs' | 'logger' | 'config'>;

/** A run a LangGraph client started, or the native agent's paused run its `command.resume` resumed. */
export interface LangGraphStart {
  run_id: string;
  session_id: string;
  agent: Agent;
  /**
   * The approval a native agent's `command.resume` answered (its paused run goes on): the run's
   * `interrupted` event for it came before the answer and is not its next stop.
   */
  answered: ReadonlySet<string>;
  /** The stream modes asked for (the frames of a native agent's stream). */
  modes: readonly StreamMode[];
}

export interface StartOptions {
  /** The thread to run on; a new thread (stateless run) when absent. */
  threadId?: string;
  /** The stream modes when the body names none. */
  defaultModes: readonly StreamMode[];
  /** A request waits for the run to stop (see StartRunOptions.waited). */
  waited: boolean;
  /** The new thread goes with the run, deleted by whoever ends it (StartRunRequest.temporary): a stateless run nobody waits for. */
  temporary?: boolean;
}

/**
 * Starts what a LangGraph client's run creation asks for. A thread paused at an interrupt is
 * not busy for LangGraph: as LangGraph's server does, a new run starts on it (a `command` that
 * resumes goes to the graph's pending interrupts), and the paused run is cancelled first, its
 * approvals closed. A native agent's paused run cannot be resumed by another run: a
 * `command.resume` answers its pending approval (the same run goes on, as when the console
 * answers it). Throws AppError: `not_found` (assistant, thread), `bad_request` (what agentplane
 * does not support, or a native agent asked for graph options), `conflict` (a busy thread
 * under `reject`, another agent's thread, a native agent's resume with nothing to resume).
 */
export async function startLangGraphRun(deps: StartDeps, principal: Principal, body: RunCreate, options: StartOptions): Promise<LangGraphStart> {
  const { tenant } = principal;
  checkRunMetadata('metadata', body.metadata);
  checkRunMetadata('config.metadata', body.config?.metadata);
  const { agent, assistant } = await resolveAssistant(deps, tenant, body.assistant_id);
  if (!isGraphAgent(agent)) refuseGraphOptions(agent, body);
  else await refuseUnknownForkPoint(deps, principal.tenant, agent, body, options.threadId);
  const modes = modesOf(body, options.defaultModes);
  const sessionId = options.threadId ?? newId();
  let created = false;
  let recorded: unknown;
  let roomChecked = false;
  if (options.threadId !== undefined) {
    const thread = await prepareThread(deps, tenant, options.threadId, agent, assistant, body.if_not_exists === 'create');
    created = thread.created;
    recorded = thread.assistantId;
    const { paused } = thread;
    if (paused && !isGraphAgent(agent)) return answerPaused(deps, principal, paused, agent, body, options.waited, modes);
    if (paused) {
      // A start the tenant's full queue refuses must leave the paused run as it is: look first.
      await checkRoom(deps, tenant);
      await replacePaused(deps, principal, paused, resumeOnly(body) ? RESUMED_ERROR : REPLACED_ERROR);
    }
    else if (body.multitask_strategy === 'rollback') {
      // Looked at before anything is rolled back, counting the places the rollback frees (each
      // run it removes: a queued one's place, a running one's slot, which admits a queued run).
      const active = await activeRuns(deps, tenant, options.threadId);
      await checkRoom(deps, tenant, active.length);
      roomChecked = true;
      await rollbackActiveRuns(deps, principal, active);
    }
  }
  const request: StartRunRequest = {
    agent_id: agent.id,
    session_id: sessionId,
    // rollback: the thread's active runs were rolled back above; the start then acts as interrupt.
    multitask: multitaskOf(body.multitask_strategy),
    ...(isGraphAgent(agent) ? { graph: graphRequestOf(body, modes, assistant) } : { input: (body.input ?? {}) as JsonObject }),
    ...(body.webhook !== undefined ? { webhook: body.webhook } : {}),
    ...(options.temporary && options.threadId === undefined ? { temporary: true } : {}),
    // LangGraph's after_seconds: the run stays pending (queued) until then.
    ...((body.after_seconds ?? 0) > 0 ? { delay_ms: Math.round(body.after_seconds! * 1000) } : {}),
  };
  try {
    // A native agent's run takes no command: with no pause to answer, a resume has nothing to go to.
    if (!isGraphAgent(agent) && body.command) throw conflict(`Thread "${sessionId}" has no pending interrupt to resume.`);
    const ticket = await deps.runs.startRun(tenant, request, { waited: options.waited, ...(roomChecked ? { roomChecked } : {}) });
    if (options.threadId !== undefined && !created && recorded !== assistant.assistant_id) await recordAssistant(deps, tenant, options.threadId, assistant);
    return { run_id: ticket.run_id, session_id: ticket.session_id, agent, answered: new Set(), modes };
  } catch (error) {
    // A refused start leaves nothing behind: not the thread this request created for it either.
    if (created) {
      await deps.store.sessions.deleteSession(tenant, sessionId).catch((failure: unknown) => {
        deps.logger.warn({ err: failure, session_id: sessionId }, 'could not remove the thread a refused LangGraph run created');
      });
    }
    throw error;
  }
}

/** A native (defineAgent) agent takes an object as input, and none of a graph's options. */
/**
 * A run from a checkpoint (`checkpoint_id`, `checkpoint`, `config.configurable.checkpoint_id`)
 * the thread does not hold would fail once started: `not_found` first, before anything is
 * written (a new thread, a stateless run's, holds none). A checkpoint of a subgraph
 * (`checkpoint_ns`) is left to the graph; an unknown thread or another agent's to the checks after.
 */
async function refuseUnknownForkPoint(deps: StartDeps, tenant: string, agent: Agent, body: RunCreate, threadId: string | undefined): Promise<void> {
  const configurable = body.config?.configurable ?? {};
  const forkFrom = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? configurable.checkpoint_id;
  const namespace = body.checkpoint?.checkpoint_ns ?? configurable.checkpoint_ns;
  if (typeof forkFrom !== 'string' || forkFrom === '' || (namespace !== undefined && namespace !== '')) return;
  const session = threadId === undefined ? undefined : await deps.store.sessions.getSession(tenant, threadId);
  if (threadId !== undefined && !session && body.if_not_exists !== 'create') return;
  if (session && session.agent_id !== '' && session.agent_id !== agent.id) return;
  if (session && deps.graphs && (await deps.graphs.threadState(tenant, session.id, agent.id, { checkpointId: forkFrom }))) return;
  throw notFound(`Checkpoint "${forkFrom}"${threadId === undefined ? '' : ` of thread "${threadId}"`}`);
}

function refuseGraphOptions(agent: Agent, body: RunCreate): void {
  const graphOnly = (['interrupt_before', 'interrupt_after', 'checkpoint', 'checkpoint_id', 'context'] as const).find((key) => body[key] !== undefined);
  if (graphOnly) throw badRequest(`${graphOnly}: assistant "${agent.id}" is not a graph; it takes an input object only.`);
  if (body.command && !resumeOnly(body)) throw badRequest(`command: assistant "${agent.id}" is not a graph; a command may only resume its pending interrupt.`);
  const input = body.input;
  if (input !== undefined && input !== null && (typeof input !== 'object' || Array.isArray(input))) {
    throw badRequest(`input: assistant "${agent.id}" takes a JSON object as input.`);
  }
}

function modesOf(body: RunCreate, fallback: readonly StreamMode[]): readonly StreamMode[] {
  return body.stream_mode === undefined ? fallback : [...new Set([body.stream_mode].flat())];
}

/** A command that only answers the pending interrupt(s): no input, update, goto or fork. */
function resumeOnly(body: RunCreate): boolean {
  const command = body.command;
  if (!command || command.resume === undefined || command.resume === null) return false;
  return command.update === undefined && command.goto === undefined && (body.input ?? null) === null && !body.checkpoint && !body.checkpoint_id;
}

/**
 * The thread exists (`created` by this request when `create` says so, its metadata naming the
 * graph and the assistant) and is not another agent's; `paused`: its latest run, when that one
 * waits at an approval; `assistantId`: the assistant its metadata names.
 */
async function prepareThread(
  deps: StartDeps,
  tenant: string,
  threadId: string,
  agent: Agent,
  assistant: Assistant,
  create: boolean,
): Promise<{ created: boolean; paused?: Run; assistantId?: unknown }> {
  const session = await deps.store.sessions.getSession(tenant, threadId);
  if (!session) {
    if (!create) throw notFound(`Thread "${threadId}"`);
    try {
      await deps.store.sessions.createSession(tenant, { session_id: threadId, metadata: { graph_id: agent.id, assistant_id: assistant.assistant_id } });
      return { created: true };
    } catch (error) {
      // Created meanwhile by another request: it exists, which is all this one needs.
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
      return { created: false };
    }
  }
  if (session.agent_id !== '' && session.agent_id !== agent.id) {
    throw conflict(`Thread "${threadId}" belongs to assistant "${session.agent_id}"; runs of "${agent.id}" need another thread.`);
  }
  const latest = await deps.store.runs.latestRun(tenant, threadId);
  return { created: false, assistantId: session.metadata.assistant_id, ...(latest?.status === 'interrupted' ? { paused: latest } : {}) };
}

/**
 * A run on an existing thread records its assistant in the thread's metadata (`graph_id` and
 * `assistant_id`, as LangGraph's server does), when it names another: a thread's assistant is
 * its latest run's. The run is started already; a failed write is logged.
 */
async function recordAssistant(deps: StartDeps, tenant: string, threadId: string, assistant: Assistant): Promise<void> {
  await deps.store.sessions.updateSessionMetadata(tenant, threadId, { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id }).catch((error: unknown) => {
    deps.logger.warn({ err: error, session_id: threadId }, "could not record a LangGraph run's assistant in its thread's metadata");
  });
}

/**
 * Refuses (429 `rate_limited`, as RunControl.startRun would) when the tenant's queue is at its
 * cap, before a start changes anything of its thread, counting `freed` places as free (what the
 * start's own changes free first). A probe, as the start's own check is.
 */
async function checkRoom(deps: StartDeps, tenant: string, freed = 0): Promise<void> {
  const { maxQueued } = shareOf(deps.config.fairShare, tenant);
  if (maxQueued <= 0) return;
  const { queued } = await deps.runs.queueDepth(tenant);
  if (queued - freed >= maxQueued) throw queueFull(queued, maxQueued);
}

/** A new run on a paused thread: the paused run is cancelled (its approvals closed) first. */
async function replacePaused(deps: StartDeps, principal: Principal, paused: Run, error: string): Promise<void> {
  try {
    await deps.runs.cancelRun(principal.tenant, paused.id, principal.subject, error);
  } catch (error) {
    // It ended meanwhile (or was answered and runs): the start below decides as for any busy thread.
    if (!(error instanceof AppError && error.code === 'conflict')) throw error;
  }
}

/** A native agent's paused run: a resume answers its pending approval and the run goes on; anything else is a new run (409 while paused). */
async function answerPaused(deps: StartDeps, principal: Principal, paused: Run, agent: Agent, body: RunCreate, waited: boolean, modes: readonly StreamMode[]): Promise<LangGraphStart> {
  if (!resumeOnly(body) || !paused.approval_id) {
    throw conflict(`Thread "${paused.session_id}" waits for an answer to its interrupt: resume it (command.resume) or cancel its run first.`);
  }
  const decision = { approved: true, comment: '', resume: body.command!.resume, decided_by: principal.subject, ...(waited ? { waited } : {}) };
  await deps.runs.answerApproval(principal.tenant, paused.approval_id, decision);
  return { run_id: paused.id, session_id: paused.session_id, agent, answered: new Set([paused.approval_id]), modes };
}

/**
 * What the engine is asked: input or command, config (the assistant's under the run's; a fork's
 * checkpoint in `configurable`), context (the assistant's under the run's), modes, and the
 * run's record (with its assistant).
 */
function graphRequestOf(body: RunCreate, modes: readonly StreamMode[], assistant: Assistant): Record<string, unknown> {
  const { checkpoint } = body;
  const merged = withAssistant(assistant, body.config, body.context);
  const config = merged.config ?? {};
  const configurable = {
    ...config.configurable,
    ...(checkpoint ? definedOf({ checkpoint_id: checkpoint.checkpoint_id, checkpoint_ns: checkpoint.checkpoint_ns, checkpoint_map: checkpoint.checkpoint_map }) : {}),
    ...(body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : {}),
  };
  const record: RunRecord = { metadata: body.metadata ?? {}, multitask_strategy: body.multitask_strategy ?? 'reject', assistant_id: assistant.assistant_id };
  return definedOf({
    input: body.input,
    command: body.command,
    config: definedOf({
      configurable: Object.keys(configurable).length > 0 ? configurable : undefined,
      tags: config.tags,
      recursion_limit: config.recursion_limit,
      metadata: config.metadata,
    }),
    context: merged.context,
    // The legacy `messages` mode is made of the model's chunks and the values (messages/partial, /complete).
    stream_mode: modes.includes('messages') ? [...new Set([...modes, 'values'])] : modes,
    stream_subgraphs: body.stream_subgraphs,
    interrupt_before: body.interrupt_before,
    interrupt_after: body.interrupt_after,
    ...record,
  });
}
