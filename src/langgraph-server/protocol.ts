import { conflict, notFound } from '../domain/errors.js';
import type { JsonObject, Principal } from '../domain/types.js';
import type { LangGraphDeps } from './deps.js';
import { startLangGraphRun } from './run-start.js';
import { graphAgentOf, interruptsOf, readThreadState, threadSession } from './thread-state.js';
import type { MultitaskStrategy, RunConfig, RunCreate, StreamMode } from './types.js';

/**
 * The commands of LangGraph's streaming protocol (v2) that agentplane answers on
 * `POST /threads/{id}/commands`: `run.start`, `input.respond` and `state.get`. A run the
 * protocol starts is a LangGraph run like any other (the same start, queue, worker and events);
 * it publishes the stream modes its thread's event stream translates (protocol-events.ts).
 */

/** What a protocol run publishes: what the thread's event stream turns into protocol events. */
export const PROTOCOL_STREAM_MODES: readonly StreamMode[] = ['values', 'updates', 'messages-tuple', 'custom'];

/**
 * A protocol run on a busy thread waits behind the running one, as LangGraph's server does for
 * the protocol (`useStream` sends no strategy unless asked).
 */
const DEFAULT_STRATEGY: MultitaskStrategy = 'enqueue';

/** `run.start` params, as the HTTP layer validated them. */
export interface ProtocolRunStart {
  assistant_id: string;
  input?: unknown;
  config?: RunConfig | undefined;
  metadata?: Record<string, unknown> | undefined;
  multitaskStrategy?: MultitaskStrategy | undefined;
}

/** `input.respond` params: one answer per interrupt, and what goes with the resume. */
export interface ProtocolRespond {
  responses: readonly { interrupt_id: string; response: unknown }[];
  update?: NonNullable<RunCreate['command']>['update'];
  goto?: unknown;
  config?: RunConfig | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Starts a run on the thread (created when it does not exist). Answers the run's id. */
export async function startProtocolRun(deps: LangGraphDeps, principal: Principal, threadId: string, params: ProtocolRunStart): Promise<{ run_id: string }> {
  const body: RunCreate = {
    assistant_id: params.assistant_id,
    input: params.input ?? null,
    ...(params.config ? { config: params.config } : {}),
    ...(params.metadata ? { metadata: params.metadata } : {}),
    multitask_strategy: params.multitaskStrategy ?? DEFAULT_STRATEGY,
    if_not_exists: 'create',
    stream_mode: [...PROTOCOL_STREAM_MODES],
    stream_subgraphs: true,
  };
  const started = await startLangGraphRun(deps, principal, body, { threadId, defaultModes: PROTOCOL_STREAM_MODES, waited: false });
  return { run_id: started.run_id };
}

/**
 * Answers interrupts the thread waits on: a new run of the thread's assistant resumes them
 * (`Command({resume: {interrupt id: answer}})`, with `update` and `goto` when given); a native
 * agent's paused run takes its one answer and goes on. Throws `not_found` (thread), `conflict`
 * (an interrupt the thread does not wait on).
 */
export async function respondToInterrupts(deps: LangGraphDeps, principal: Principal, threadId: string, params: ProtocolRespond): Promise<{ run_id: string }> {
  const { tenant } = principal;
  const session = await threadSession(deps, tenant, threadId);
  const pending = new Set(
    Object.values(interruptsOf(await readThreadState(deps, tenant, session)))
      .flat()
      .map((entry) => (entry as { id?: unknown }).id),
  );
  const unknown = params.responses.find((entry) => !pending.has(entry.interrupt_id));
  if (unknown) throw conflict(`Thread "${threadId}" does not wait on interrupt "${unknown.interrupt_id}".`);
  const graph = graphAgentOf(deps, session) !== undefined;
  if (!graph && params.responses.length !== 1) throw conflict(`Thread "${threadId}" is a native agent's: it takes one answer at a time.`);
  const resume = graph ? Object.fromEntries(params.responses.map((entry) => [entry.interrupt_id, entry.response])) : params.responses[0]!.response;
  const assistant = session.metadata.assistant_id ?? session.metadata.graph_id ?? session.agent_id;
  if (typeof assistant !== 'string' || assistant === '') throw notFound(`The assistant of thread "${threadId}"`);
  const body: RunCreate = {
    assistant_id: assistant,
    command: { resume, ...(params.update !== undefined ? { update: params.update } : {}), ...(params.goto !== undefined ? { goto: params.goto } : {}) },
    ...(params.config ? { config: params.config } : {}),
    ...(params.metadata ? { metadata: params.metadata } : {}),
    stream_mode: [...PROTOCOL_STREAM_MODES],
    stream_subgraphs: true,
  };
  const started = await startLangGraphRun(deps, principal, body, { threadId, defaultModes: PROTOCOL_STREAM_MODES, waited: false });
  return { run_id: started.run_id };
}

/** `state.get`: the thread's values (only `keys`, when given) and its latest checkpoint. Throws `not_found` (thread). */
export async function protocolState(deps: LangGraphDeps, tenant: string, threadId: string, keys?: readonly string[]): Promise<JsonObject> {
  const state = await readThreadState(deps, tenant, await threadSession(deps, tenant, threadId));
  const values = (state.values ?? {}) as JsonObject;
  const checkpoint = state.checkpoint as { checkpoint_id?: unknown; checkpoint_ns?: unknown } | null;
  return {
    values: keys ? Object.fromEntries(Object.entries(values).filter(([key]) => keys.includes(key))) : values,
    ...(typeof checkpoint?.checkpoint_id === 'string' ? { checkpoint: { id: checkpoint.checkpoint_id, ns: checkpoint.checkpoint_ns ?? '' } } : {}),
  };
}
