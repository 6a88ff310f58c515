import { Command } from '@langchain/langgraph';
import type { GraphCheckpointEntry } from '../ports/graph-storage.js';
import type { GraphRunInput } from '../ports/graph-threads.js';
import type { RunAttempt } from '../runtime/run/run-attempt.js';
import type { AnyGraph, GraphLoader } from './graph-loader.js';
import { answerOf, graphApprovalId, interruptsOf, streamInputOf, type PendingInterrupt } from './run-input.js';

/**
 * Where a run starts: new input (a fresh run), the answers of a resume, null to go on; or a
 * pause still waiting on answers. `stored` is the thread's latest checkpoint as read to decide
 * it (null: none), handed to the graph's first read; `resumedFrom`, the checkpoint the graph
 * goes on from when it is not given new input (LangGraph streams it again, already recorded).
 */
export type Start =
  | { kind: 'stream'; input: unknown; resumedFrom: unknown; fresh: boolean; stored: GraphCheckpointEntry | null }
  | { kind: 'pause'; pending: PendingInterrupt[] };

/**
 * What to stream for a run: its input or command (a fresh run); a resume's answers; null to go
 * on from the last checkpoint (a re-delivered job whose run got that far, a session resumed).
 * One read of the latest checkpoint decides it: the interrupts a resume answers are its pending
 * `__interrupt__` writes (a state snapshot, which plans the next tasks, only when one is still
 * unanswered and the pause is asked again).
 */
export async function startOf(attempt: RunAttempt, graphs: GraphLoader, graph: AnyGraph, config: { configurable: Record<string, unknown> }, asked: GraphRunInput): Promise<Start> {
  const { job, run, tenant, store } = attempt;
  const checkpoints = graphs.storageOf(tenant).checkpoints;
  const stored = await checkpoints.entryFor(config);
  if (!job.approval_id) {
    const started = job.kind === 'resume' || (stored !== null && ((await checkpoints.metadataOf(stored)) as Record<string, unknown>).run_id === run.id);
    if (started) return { kind: 'stream', input: null, resumedFrom: stored?.record.checkpointId, fresh: false, stored };
    return { kind: 'stream', input: streamInputOf(asked), resumedFrom: undefined, fresh: true, stored };
  }
  const resume: Record<string, unknown> = {};
  let unanswered = false;
  const interrupts = stored ? (await checkpoints.interruptsOf(stored)).filter((pending) => typeof pending.id === 'string') : [];
  for (const pending of interrupts) {
    const answer = answerOf(await store.approvals.getApproval(tenant, graphApprovalId(run.id, pending.id as string)));
    if (answer) resume[pending.id as string] = answer.value;
    else unanswered = true;
  }
  // A pause on several interrupts resumes once each is answered.
  if (unanswered) return { kind: 'pause', pending: interruptsOf(await graph.getState(config)).filter((pending) => !(pending.id in resume)) };
  let input: unknown = null;
  if (Object.keys(resume).length > 0) {
    input = new Command({ resume });
  } else if (interrupts.length === 0) {
    // The state was edited during the pause: the new checkpoint's task asks afresh (another
    // interrupt id), and its first interrupt() takes the answer given.
    const answer = answerOf(await store.approvals.getApproval(tenant, job.approval_id));
    if (answer) input = new Command({ resume: answer.value });
  }
  return { kind: 'stream', input, resumedFrom: stored?.record.checkpointId, fresh: false, stored };
}
