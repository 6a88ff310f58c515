import { conflict, notFound } from '../domain/errors.js';
import { ACTIVE_RUN_STATUSES, type Principal, type Run, type RunStatus } from '../domain/types.js';
import type { LangGraphDeps } from './deps.js';
import { recordOf, runJsonOf, statusesOf } from './run-json.js';
import { cancelQuietly, rollbackRun } from './run-rollback.js';
import { startLangGraphRun } from './run-start.js';
import type { LangGraphRun, LangGraphRunStatus, RunCreate } from './types.js';

/** The runs of the LangGraph Server API as runs are read, created without a wait, cancelled, rolled back and deleted. */

type RunDeps = Pick<LangGraphDeps, 'store' | 'runs' | 'agents' | 'assistants' | 'graphs' | 'logger' | 'config'>;

/** How a cancel ends an active run: `interrupt` (cancelled) or `rollback` (deleted, its thread rolled back). */
export type CancelAction = 'interrupt' | 'rollback';

/** The run of a thread, or `not_found` (another thread's run, or none). */
export async function threadRun(deps: Pick<LangGraphDeps, 'store'>, tenant: string, threadId: string, runId: string): Promise<Run> {
  const run = await deps.store.runs.getRun(tenant, runId);
  if (!run || run.session_id !== threadId) throw notFound(`Run "${runId}"`);
  return run;
}

/** The approval the run waits at when it is paused (interrupted), '' for a pause without one; undefined otherwise. */
export async function pausedAt(deps: Pick<LangGraphDeps, 'store'>, tenant: string, runId: string): Promise<string | undefined> {
  const run = await deps.store.runs.getRun(tenant, runId);
  return run?.status === 'interrupted' ? (run.approval_id ?? '') : undefined;
}

/**
 * A run as LangGraph's Run, with the metadata and strategy it was created with; a pending one
 * also with its tenant's queue (a field LangGraph's clients ignore).
 */
export async function describeRun(deps: Pick<LangGraphDeps, 'store' | 'runs'>, tenant: string, run: Run): Promise<LangGraphRun> {
  const json = runJsonOf(run, recordOf(await deps.store.runs.getRunInput(tenant, run.id)));
  if (run.status !== 'queued') return json;
  const depth = await deps.runs.queueDepth(tenant);
  return { ...json, queue: { tenant_queued: depth.queued, tenant_running: depth.running, workers: depth.workers } };
}

/**
 * `POST /threads/{id}/runs`, and `POST /runs` without a thread (a new one, which goes with the
 * run once it ended unless `on_completion` is `keep`): starts the run and answers it, pending.
 */
export async function createRun(deps: RunDeps, principal: Principal, body: RunCreate, threadId?: string): Promise<LangGraphRun> {
  const temporary = threadId === undefined && body.on_completion !== 'keep';
  const started = await startLangGraphRun(deps, principal, body, { ...(threadId ? { threadId } : { temporary }), defaultModes: ['values'], waited: false });
  return describeRun(deps, principal.tenant, await threadRun(deps, principal.tenant, started.session_id, started.run_id));
}

/** A page of the thread's runs (of its newest 100), newest first, in a LangGraph status when one is given. */
export async function listThreadRuns(
  deps: Pick<LangGraphDeps, 'store' | 'runs'>,
  tenant: string,
  threadId: string,
  page: { limit: number; offset: number; status?: LangGraphRunStatus | undefined },
): Promise<LangGraphRun[]> {
  if (!(await deps.store.sessions.getSession(tenant, threadId))) throw notFound(`Thread "${threadId}"`);
  const all = await deps.store.runs.listRuns(tenant, threadId, { limit: 100, offset: 0 });
  const runs = (page.status ? all.filter(statusesOf(page.status)) : all).slice(page.offset, page.offset + page.limit);
  return Promise.all(runs.map((run) => describeRun(deps, tenant, run)));
}

/** Deletes a run that ended, with the thread's checkpoints it wrote; `conflict` while it is active. */
export async function deleteEndedRun(deps: RunDeps, principal: Principal, threadId: string, runId: string): Promise<void> {
  const run = await threadRun(deps, principal.tenant, threadId, runId);
  if (ACTIVE_RUN_STATUSES.includes(run.status)) throw conflict(`Run "${run.id}" is pending, running or interrupted: cancel it first (action rollback also deletes it).`);
  await rollbackRun(deps, principal, run);
}

/** Cancels (or rolls back) a run when it is active; one that ended is left as it is. */
async function stopRun(deps: RunDeps, principal: Principal, run: Run, action: CancelAction | undefined): Promise<void> {
  if (ACTIVE_RUN_STATUSES.includes(run.status)) await (action === 'rollback' ? rollbackRun(deps, principal, run) : cancelQuietly(deps, principal, run.id));
}

/** Cancels (or rolls back) a run of a thread. */
export async function cancelThreadRun(deps: RunDeps, principal: Principal, threadId: string, runId: string, action: CancelAction | undefined): Promise<void> {
  await stopRun(deps, principal, await threadRun(deps, principal.tenant, threadId, runId), action);
}

/** What `POST /runs/cancel` names: runs by id (of a thread), or the runs in a status (of a thread). */
export interface RunsToCancel {
  thread_id?: string | undefined;
  run_ids?: string[] | undefined;
  status?: 'pending' | 'running' | 'all' | undefined;
}

/** Cancels (or rolls back), one after the other, the active runs `which` names; `not_found` for a run id of none. */
export async function cancelRuns(deps: RunDeps, principal: Principal, which: RunsToCancel, action: CancelAction | undefined): Promise<void> {
  const { tenant } = principal;
  const { thread_id: threadId, run_ids: runIds } = which;
  const runs = runIds
    ? await Promise.all(runIds.map(async (id) => (threadId ? threadRun(deps, tenant, threadId, id) : runOrThrow(deps, tenant, id))))
    : await runsIn(deps, tenant, which.status!, threadId);
  for (const run of runs) await stopRun(deps, principal, run, action);
}

async function runOrThrow(deps: Pick<LangGraphDeps, 'store'>, tenant: string, runId: string): Promise<Run> {
  const run = await deps.store.runs.getRun(tenant, runId);
  if (!run) throw notFound(`Run "${runId}"`);
  return run;
}

/** The tenant's (or a thread's) runs in a LangGraph status: pending (queued), running, or both. */
async function runsIn(deps: Pick<LangGraphDeps, 'store'>, tenant: string, status: 'pending' | 'running' | 'all', threadId?: string): Promise<Run[]> {
  const statuses: RunStatus[] = status === 'pending' ? ['queued'] : status === 'running' ? ['running'] : ['queued', 'running'];
  const found = await Promise.all(statuses.map((s) => deps.store.runs.findRuns(tenant, { status: s, ...(threadId ? { session_id: threadId } : {}), limit: 500, offset: 0 })));
  return found.flat();
}
