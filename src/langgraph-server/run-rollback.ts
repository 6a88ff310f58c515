import { AppError } from '../domain/errors.js';
import { ACTIVE_RUN_STATUSES, type Principal, type Run } from '../domain/types.js';
import type { LangGraphDeps } from './deps.js';
import { isGraphAgent } from '../runtime/agent.js';

type RollbackDeps = Pick<LangGraphDeps, 'store' | 'runs' | 'agents' | 'graphs' | 'logger'>;

/** The error of a run cancelled to be rolled back (kept nowhere once it is deleted; said in its `cancelled` event). */
const ROLLED_BACK_ERROR = 'rolled back (action or multitask_strategy rollback)';

/**
 * Rolls a run back as LangGraph's server does: cancelled when active, its graph's thread back
 * to where it was before the run (the run's LangGraph checkpoints removed, the session's state
 * mirroring what is left), and the run deleted with its approvals. A `defineAgent` agent's
 * state is left as it is (its checkpoints do not say which run wrote them). Throws AppError
 * `conflict` when the run was resumed meanwhile and is active again.
 */
export async function rollbackRun(deps: RollbackDeps, principal: Principal, run: Run): Promise<void> {
  const { tenant } = principal;
  if (ACTIVE_RUN_STATUSES.includes(run.status)) await cancelQuietly(deps, principal, run.id, ROLLED_BACK_ERROR);
  if (isGraphAgent(deps.agents.get(run.agent_id)) && deps.graphs) await deps.graphs.rollbackRun(tenant, run.session_id, run.agent_id, run.id);
  await deleteQuietly(deps, tenant, run.id);
}

/** The thread's queued and running runs, newest first (those queued behind first). */
export async function activeRuns(deps: Pick<RollbackDeps, 'store'>, tenant: string, threadId: string): Promise<Run[]> {
  const runs = await deps.store.runs.listRuns(tenant, threadId, { limit: 100, offset: 0 });
  return runs.filter((run) => run.status === 'queued' || run.status === 'running');
}

/**
 * `multitask_strategy: rollback`: rolls back the thread's queued and running runs (those
 * queued behind first, so none is promoted meanwhile; {@link activeRuns}), as LangGraph rolls
 * back the pending and running runs of a thread before it starts the new one.
 */
export async function rollbackActiveRuns(deps: RollbackDeps, principal: Principal, active: readonly Run[]): Promise<void> {
  for (const run of active) await rollbackRun(deps, principal, run);
}

async function deleteQuietly(deps: RollbackDeps, tenant: string, runId: string): Promise<void> {
  try {
    await deps.store.runs.deleteRun(tenant, runId);
  } catch (error) {
    // Deleted meanwhile by another rollback (or with its thread): gone either way.
    if (!(error instanceof AppError && error.code === 'not_found')) throw error;
  }
}

/** Cancels a run unless it ended already (or is gone). */
export async function cancelQuietly(deps: Pick<LangGraphDeps, 'runs' | 'logger'>, principal: Principal, runId: string, error?: string): Promise<void> {
  try {
    await deps.runs.cancelRun(principal.tenant, runId, principal.subject, error);
  } catch (failure) {
    if (failure instanceof AppError && (failure.code === 'conflict' || failure.code === 'not_found')) return;
    deps.logger.warn({ err: failure, run_id: runId }, 'could not cancel a LangGraph run');
  }
}
