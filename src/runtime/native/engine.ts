import { clip, END_NODE, MAX_PROMPT_CHARS, type Checkpoint, type Run } from '../../domain/types.js';
import type { NativeAgent } from '../agent.js';
import type { RunAttempt } from '../run/run-attempt.js';
import type { RunEngine } from '../run/run-engine.js';
import { approvalIdOf, runNode } from './node-attempt.js';

export interface NativeEngineOptions {
  /** Node executions per job before the run fails (a loop that never ends). @defaultValue 100 */
  stepLimit: number;
}

/** The `<run id>.<seq_num>` an approval id starts with (run ids hold no dot). */
function approvalBase(approvalId: string): string {
  return approvalId.split('.').slice(0, 2).join('.');
}

/**
 * The engine of `defineAgent` agents: walks the nodes from the session's latest checkpoint.
 * Per node: the node (tried again per its `retry`), then one journal step: the checkpoint
 * (seq_num + 1, node_id = the next node; written only while the run still runs), the node's
 * span, `node_end`, then `node_start` of the next node or the run's completion. A node's
 * `ctx.interrupt` pauses the run; a re-delivered job continues from the latest checkpoint.
 */
export function createNativeEngine(options: NativeEngineOptions): RunEngine<NativeAgent> {
  return { drive: (attempt, agent) => drive(attempt, agent, options) };
}

async function drive(attempt: RunAttempt, agent: NativeAgent, options: NativeEngineOptions): Promise<Run | undefined> {
  const { job, run, signal } = attempt;
  const first = attempt.checkpoint ?? (await attempt.store.sessions.getCheckpoint(attempt.tenant, job.session_id));
  if (!first) return attempt.fail('The session has no checkpoint to run from.');
  let checkpoint: Checkpoint = first;
  // The first node of a resume replays the answers its interrupts already have (the session
  // may have been patched since, so the approvals are found from the job's, not the seq_num).
  let replayBase: string | undefined = job.approval_id ? approvalBase(job.approval_id) : `${run.id}.${first.seq_num}`;

  for (let steps = 0; checkpoint.node_id !== END_NODE; steps += 1) {
    if (signal.aborted) return attempt.current();
    if (steps >= options.stepLimit) return attempt.fail(`The run exceeded the step limit of ${options.stepLimit} nodes.`);
    const node = checkpoint.node_id;
    const base = replayBase ?? `${run.id}.${checkpoint.seq_num}`;
    const traced = attempt.startTrace(`node ${node}`, node);
    const replay = replayBase !== undefined;
    const outcome = await attempt.inTrace(traced, () => runNode(attempt, agent, checkpoint, base, replay));
    replayBase = undefined;
    const stopped = () => attempt.stopped(attempt.span(node, outcome.start, 'cancelled', { traced }));
    if (outcome.kind === 'cancelled') return stopped();
    if (outcome.kind === 'interrupted') {
      const { request, index } = outcome.signal;
      const paused = await attempt.pause([
        {
          id: approvalIdOf(outcome.base, index),
          node,
          prompt: clip(request.prompt, MAX_PROMPT_CHARS),
          payload: request.payload,
          ...(request.expires_in_ms ? { expiresInMs: request.expires_in_ms } : {}),
          ...(request.on_timeout ? { onTimeout: request.on_timeout } : {}),
          span: attempt.span(node, outcome.start, 'interrupted', { traced }),
        },
      ]);
      return paused.kind === 'paused' ? paused.run : stopped();
    }
    const failed = async (message: string, runError = message) => {
      await attempt.addSpan(attempt.span(node, outcome.start, 'error', { error: message, traced }));
      await attempt.publish({ type: 'node_end', node, status: 'error' });
      return attempt.fail(runError);
    };
    if (outcome.kind === 'error') return failed(outcome.message);
    // One step: the checkpoint (the patch alone, O(patch); only while this run still runs),
    // the span, node_end, then node_start of the next node or the run's completion.
    const step = await attempt.step({ ended: [{ node, span: attempt.span(node, outcome.start, 'ok', { traced }) }], patch: outcome.patch, next: outcome.next });
    if (step.kind === 'stopped') return stopped();
    if (step.kind === 'refused') return failed(step.message, `Node "${node}": ${step.message}`);
    const { result } = step;
    if (result.completed) return attempt.completedBy({ ...result, completed: result.completed });
    checkpoint = { ...result.checkpoint, state: { ...checkpoint.state, ...outcome.patch } };
  }

  return attempt.complete();
}
