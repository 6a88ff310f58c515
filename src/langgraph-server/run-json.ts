import { TIMEOUT_ERROR, type Run } from '../domain/types.js';
import { assistantIdOf } from './assistants.js';
import type { LangGraphRun, LangGraphRunStatus, RunRecord } from './types.js';

/**
 * An agentplane run as LangGraph's Run: what the runs routes answer and what a run's webhook
 * posts when it ends (the composition root gives it to the run webhooks).
 */

/** The error of a paused run cancelled because a new run came on its thread. */
export const REPLACED_ERROR = 'interrupted by a new run on its thread';
/** The error of a paused run cancelled because a new run resumes its interrupt (`command.resume`). */
export const RESUMED_ERROR = 'resumed by a new run on its thread (command.resume)';

/**
 * A run's LangGraph status: queued → pending, running → running, paused at an approval →
 * interrupted, completed → success, failed → error, cancelled → interrupted (timeout when its
 * deadline cancelled it). A paused run a later run on its thread took over (a resume, or new
 * input; it is cancelled then) is `success`: for LangGraph's server a run that reached an
 * interrupt ended well, and a resume is a new run.
 */
export function langgraphStatusOf(run: Pick<Run, 'status' | 'error'>): LangGraphRunStatus {
  switch (run.status) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'running';
    case 'completed':
      return 'success';
    case 'failed':
      return 'error';
    case 'cancelled':
      if (run.error === RESUMED_ERROR || run.error === REPLACED_ERROR) return 'success';
      return run.error === TIMEOUT_ERROR ? 'timeout' : 'interrupted';
    case 'interrupted':
      return 'interrupted';
  }
}

/** The run's statuses a LangGraph status stands for (a filter of the runs list). */
export function statusesOf(status: LangGraphRunStatus): (run: Run) => boolean {
  return (run) => langgraphStatusOf(run) === status;
}

/** The stored `graph_input` of a run as a {@link RunRecord} (a native agent's run has none). */
export function recordOf(graphInput: string | null): RunRecord {
  if (graphInput === null) return {};
  const parsed = JSON.parse(graphInput) as RunRecord;
  return { metadata: parsed.metadata, multitask_strategy: parsed.multitask_strategy, ...(parsed.assistant_id === undefined ? {} : { assistant_id: parsed.assistant_id }) };
}

/** An agentplane run as LangGraph's Run. */
export function runJsonOf(run: Run, record: RunRecord): LangGraphRun {
  return {
    run_id: run.id,
    thread_id: run.session_id,
    assistant_id: record.assistant_id ?? assistantIdOf(run.agent_id),
    created_at: run.created_at,
    updated_at: run.updated_at,
    status: langgraphStatusOf(run),
    metadata: record.metadata ?? {},
    multitask_strategy: record.multitask_strategy ?? 'reject',
  };
}
