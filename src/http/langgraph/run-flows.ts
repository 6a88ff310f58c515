import type { Context } from 'koa';
import { ACTIVE_RUN_STATUSES, type Principal, type Run, type StoredEvent } from '../../domain/types.js';
import { afterwardsOf, cancelLeft, discardThread, valuesOf } from '../../langgraph-server/run-stops.js';
import { startLangGraphRun, type LangGraphStart } from '../../langgraph-server/run-start.js';
import { threadRun } from '../../langgraph-server/runs.js';
import type { RunCreate, StreamMode, ThreadStreamMode } from '../../langgraph-server/types.js';
import type { AppDeps } from '../deps.js';
import type { RouteResult } from '../route.js';
import { holdForRun, waitedRun } from '../run-wait.js';
import { keptAlive } from './keep-alive.js';
import { FROM_START, LangGraphStream, ThreadRunFrames } from './sse.js';
import { followThread } from './thread-follow.js';
import { isGraphAgent } from '../../runtime/agent.js';

/**
 * The LangGraph run requests that hold their connection while a run goes on (waits, joins,
 * streams): subscribed before the run starts or is read, answered from its events, whichever
 * replica or worker has it. What happens to the run and its thread is the services'
 * (src/langgraph-server/); this is the connection's part.
 */

/** A LangGraph wait has no deadline of its own: it holds until the run stops (the longest timer Node keeps). */
const UNTIL_STOPPED_MS = 2_147_483_647;

/** `Content-Location` of a started run (the SDK reads the run id from it); a discarded thread's run is `/runs/<id>`. */
function locate(ctx: Context, started: LangGraphStart, discard: boolean): void {
  const run = `/runs/${started.run_id}`;
  ctx.set('Content-Location', discard ? run : `/threads/${started.session_id}${run}`);
}

const staleOf = (started: LangGraphStart) => (event: StoredEvent) => event.event.type === 'interrupted' && started.answered.has(event.event.approval_id ?? '');

/** POST …/runs/wait: starts the run and answers the thread's values once it stops (kept alive meanwhile). */
export async function waitForRun(deps: AppDeps, principal: Principal, ctx: Context, body: RunCreate, threadId?: string): Promise<RouteResult> {
  const { tenant } = principal;
  const held = await holdForRun(deps, ctx, principal);
  let started: LangGraphStart;
  try {
    started = await startLangGraphRun(deps, principal, body, { ...(threadId ? { threadId } : {}), defaultModes: [], waited: true });
  } catch (error) {
    held.done();
    throw error;
  }
  const after = afterwardsOf(body, threadId);
  locate(ctx, started, after.discard);
  const answer = (async () => {
    try {
      held.follow(started.run_id, staleOf(started));
      const stop = await held.until(UNTIL_STOPPED_MS);
      if (!stop && after.cancelOnLeave && !deps.lifecycle.draining) await cancelLeft(deps, principal, started.run_id);
      return await valuesOf(deps, tenant, await waitedRun(deps, tenant, started, stop));
    } finally {
      held.done();
      if (after.discard) await discardThread(deps, principal, started.session_id);
    }
  })();
  return keptAlive(ctx, answer, deps.config.SERVICE_SSE_HEARTBEAT_MS, deps.logger);
}

/** POST …/runs/stream: starts the run and streams it until it stops. */
export async function streamRun(deps: AppDeps, principal: Principal, ctx: Context, body: RunCreate, threadId?: string): Promise<RouteResult> {
  const stream = await LangGraphStream.open(deps, principal, ctx);
  let started: LangGraphStart;
  try {
    started = await startLangGraphRun(deps, principal, body, { ...(threadId ? { threadId } : {}), defaultModes: ['values'], waited: false });
  } catch (error) {
    stream.abandon();
    throw error;
  }
  const after = afterwardsOf(body, threadId);
  locate(ctx, started, after.discard);
  // Where the SDK reconnects (with Last-Event-ID) when the connection drops before the run stopped.
  if (!after.discard) ctx.set('Location', `/threads/${started.session_id}/runs/${started.run_id}/stream`);
  stream.begin(ctx, { ...started, graph: isGraphAgent(started.agent) }, {
    onLeft: () => {
      if (!after.cancelOnLeave) return;
      void cancelLeft(deps, principal, started.run_id).then(async () => {
        if (after.discard) await discardThread(deps, principal, started.session_id);
      });
    },
    ...(after.discard ? { onStopped: () => void discardThread(deps, principal, started.session_id) } : {}),
  });
  return 'handled';
}

const isActive = (run: Run) => ACTIVE_RUN_STATUSES.includes(run.status) && run.status !== 'interrupted';

/** GET …/runs/{id}/join: the thread's values once the run stops (at once when it has). */
export async function joinRun(deps: AppDeps, principal: Principal, ctx: Context, threadId: string, runId: string, cancelOnLeave: boolean): Promise<RouteResult> {
  const { tenant } = principal;
  const held = await holdForRun(deps, ctx, principal);
  let run: Run;
  try {
    run = await threadRun(deps, tenant, threadId, runId);
  } catch (error) {
    held.done();
    throw error;
  }
  const answer = (async () => {
    try {
      let stop: StoredEvent | 'stopped' | null = 'stopped';
      if (isActive(run)) {
        held.follow(run.id);
        stop = await held.until(UNTIL_STOPPED_MS);
        if (!stop && cancelOnLeave && !deps.lifecycle.draining) await cancelLeft(deps, principal, run.id);
      }
      return await valuesOf(deps, tenant, await waitedRun(deps, tenant, { run_id: run.id, session_id: run.session_id }, stop));
    } finally {
      held.done();
    }
  })();
  return keptAlive(ctx, answer, deps.config.SERVICE_SSE_HEARTBEAT_MS, deps.logger);
}

/** GET …/runs/{id}/stream: the run's stream, after `afterId` (Last-Event-ID) or from its start, until it stops. */
export async function joinStream(
  deps: AppDeps,
  principal: Principal,
  ctx: Context,
  ref: { threadId: string; runId: string; afterId?: string; modes: readonly StreamMode[]; cancelOnLeave: boolean },
): Promise<RouteResult> {
  const stream = await LangGraphStream.open(deps, principal, ctx);
  let run: Run;
  try {
    run = await threadRun(deps, principal.tenant, ref.threadId, ref.runId);
  } catch (error) {
    stream.abandon();
    throw error;
  }
  const graph = isGraphAgent(deps.agents.get(run.agent_id));
  stream.begin(ctx, { run_id: run.id, session_id: run.session_id, graph, modes: ref.modes, answered: new Set() }, {
    // Without Last-Event-ID, from the run's start: as LangGraph's server keeps a run's frames for
    // the client that comes late (runs.create, then joinStream), ended or not.
    afterId: ref.afterId ?? FROM_START,
    stopped: !isActive(run),
    ...(run.status === 'interrupted' && run.approval_id ? { pausedAt: run.approval_id } : {}),
    onLeft: () => {
      if (ref.cancelOnLeave) void cancelLeft(deps, principal, run.id);
    },
  });
  return 'handled';
}

/**
 * GET /threads/{id}/stream: the thread's runs on one stream (thread-follow.ts), framed as their
 * own streams (ThreadRunFrames): the run under way, if any, from its first event, then each
 * run started on the thread after it, until the client leaves; after `afterId` (Last-Event-ID),
 * every frame of the thread's runs after that event.
 */
export async function joinThreadStream(
  deps: AppDeps,
  principal: Principal,
  ctx: Context,
  ref: { threadId: string; afterId?: string; modes: readonly ThreadStreamMode[] },
): Promise<RouteResult> {
  const frames = new ThreadRunFrames(new Set(ref.modes), (agentId) => isGraphAgent(deps.agents.get(agentId)), ref.afterId);
  return followThread(deps, principal, ctx, ref.threadId, {
    name: 'LangGraph thread stream',
    keepAliveFirst: true,
    // The run under way: the oldest active one (one may wait behind it); a paused run is not under way.
    current: (runs) => runs.filter(isActive).at(-1),
    ...(ref.afterId ? { afterId: ref.afterId } : {}),
    deliver: (stored, stream) => frames.write(stored, stream),
  });
}
