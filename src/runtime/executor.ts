import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';
import { newId, nowIso } from '../domain/time.js';
import { clip, END_NODE, MAX_ERROR_CHARS, MAX_PROMPT_CHARS, type Checkpoint, type JsonObject, type Run, type RunEvent, type Span } from '../domain/types.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunJob } from '../ports/run-queue.js';
import type { Store } from '../ports/store.js';
import type { Agent, InterruptDecision, NodeContext } from './agent.js';
import type { AgentRegistry } from './registry.js';

export interface ExecutorOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  events: EventBus;
  agents: AgentRegistry;
  logger: Logger;
  /** Node executions per job before the run fails (a loop that never ends). @defaultValue 100 */
  stepLimit: number;
  /** Called when a run reaches a status (metrics). */
  onRunStatus?: (run: Run) => void;
  /** Called after each published event (metrics). */
  onEvent?: (event: RunEvent) => void;
}

/** Thrown inside a node by `ctx.interrupt` to pause the run; never escapes the executor. */
class InterruptSignal {
  constructor(readonly prompt: string) {}
}

/** Executes one run job; resolves with the run as the job left it, or undefined when it did not run it. */
export type Execute = (job: RunJob) => Promise<Run | undefined>;

/**
 * Executes run jobs: per node, event `node_start`, the node, the checkpoint (seq_num + 1,
 * node_id = the next node), the node's span, event `node_end`; the run's root span when it
 * ends. Runs are at-least-once: a job for a run already finished is ignored, and a job
 * re-delivered after a crash continues from the latest checkpoint.
 */
export function createExecutor(options: ExecutorOptions): Execute {
  const { store, events, agents, logger } = options;

  return async function execute(job: RunJob): Promise<Run | undefined> {
    const { tenant } = job;
    let run: Run;
    try {
      // A re-delivered job (its worker died) finds the run still running and continues it.
      run = await store.runs.updateRun(tenant, job.run_id, { status: 'running', from: ['queued', 'running'] });
    } catch (error) {
      if (error instanceof AppError && (error.code === 'conflict' || error.code === 'not_found')) return undefined;
      throw error;
    }

    const publish = async (event: Omit<RunEvent, 'session' | 'run_id' | 'agent_id' | 'ts'>) => {
      const full: RunEvent = { ...event, session: job.session_id, run_id: job.run_id, agent_id: job.agent_id, ts: nowIso() };
      await events.publish(tenant, full);
      options.onEvent?.(full);
    };
    const finish = async (status: 'completed' | 'failed', error?: string): Promise<Run> => {
      const done = await store.runs.updateRun(tenant, run.id, { status, ...(error ? { error } : {}) });
      await store.sessions.addSpan(tenant, job.session_id, {
        span_id: run.id,
        parent_id: '',
        name: `run ${job.agent_id}`,
        start: run.created_at,
        end: nowIso(),
        attributes: { agent_id: job.agent_id, run_id: run.id, status, ...(error ? { error } : {}) },
      });
      await publish(status === 'completed' ? { type: 'completed' } : { type: 'failed', error: error ?? 'failed' });
      options.onRunStatus?.(done);
      return done;
    };

    const agent = agents.get(job.agent_id);
    if (!agent) return finish('failed', `Agent "${job.agent_id}" is not registered on this worker.`);
    const first = await store.sessions.getCheckpoint(tenant, job.session_id);
    if (!first) return finish('failed', 'The session has no checkpoint to run from.');
    let checkpoint: Checkpoint = first;
    let decision = await decisionFor(store, tenant, job.approval_id);

    for (let steps = 0; checkpoint.node_id !== END_NODE; steps += 1) {
      if (steps >= options.stepLimit) {
        return finish('failed', `The run exceeded the step limit of ${options.stepLimit} nodes.`);
      }
      const outcome = await runNode(agent, checkpoint, decision);
      decision = undefined;
      if (outcome.kind === 'interrupted') {
        const approval = await store.approvals.createApproval(tenant, {
          id: `${run.id}.${checkpoint.seq_num}`,
          session_id: job.session_id,
          run_id: run.id,
          agent_id: job.agent_id,
          node_id: checkpoint.node_id,
          prompt: clip(outcome.prompt, MAX_PROMPT_CHARS),
          requested_at: nowIso(),
        });
        await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, checkpoint.node_id, outcome.start, 'interrupted'));
        await publish({ type: 'interrupted', node: checkpoint.node_id, approval_id: approval.id });
        const paused: Run = { ...run, status: 'interrupted', approval_id: approval.id };
        options.onRunStatus?.(paused);
        return paused;
      }
      if (outcome.kind === 'error') {
        await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, checkpoint.node_id, outcome.start, 'error', outcome.message));
        await publish({ type: 'node_end', node: checkpoint.node_id, status: 'error' });
        return finish('failed', outcome.message);
      }
      const node = checkpoint.node_id;
      // The store writes the patch alone (O(patch)); the state is merged here, as JSON stores it.
      const written = await store.sessions.appendCheckpoint(tenant, job.session_id, { patch: outcome.patch, node_id: outcome.next });
      checkpoint = { ...written, state: { ...checkpoint.state, ...(JSON.parse(JSON.stringify(outcome.patch)) as JsonObject) } };
      await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, node, outcome.start, 'ok'));
      await publish({ type: 'node_end', node, status: 'ok' });
    }
    return finish('completed');

    async function runNode(
      agent: Agent,
      at: Checkpoint,
      answer: InterruptDecision | undefined,
    ): Promise<
      | { kind: 'ok'; patch: JsonObject; next: string; start: string }
      | { kind: 'interrupted'; prompt: string; start: string }
      | { kind: 'error'; message: string; start: string }
    > {
      await publish({ type: 'node_start', node: at.node_id });
      const start = nowIso();
      let pending = answer;
      const ctx: NodeContext = {
        run_id: run.id,
        session_id: job.session_id,
        agent_id: job.agent_id,
        tenant,
        interrupt: async ({ prompt }) => {
          if (pending) {
            const given = pending;
            pending = undefined;
            return given;
          }
          throw new InterruptSignal(prompt);
        },
      };
      try {
        const fn = agent.nodes[at.node_id];
        if (!fn) throw new Error(`Node "${at.node_id}" does not exist in agent "${agent.id}".`);
        const patch = (await fn(structuredClone(at.state), ctx)) ?? {};
        const next = agent.next(at.node_id, { ...at.state, ...patch });
        return { kind: 'ok', patch, next, start };
      } catch (error) {
        if (error instanceof InterruptSignal) return { kind: 'interrupted', prompt: error.prompt, start };
        logger.warn({ err: error, run_id: run.id, node: at.node_id }, 'node failed');
        return { kind: 'error', message: clip(error instanceof Error ? error.message : String(error), MAX_ERROR_CHARS), start };
      }
    }
  };
}

async function decisionFor(store: Pick<Store, 'approvals'>, tenant: string, approvalId: string | undefined): Promise<InterruptDecision | undefined> {
  if (!approvalId) return undefined;
  const approval = await store.approvals.getApproval(tenant, approvalId);
  if (!approval || approval.status === 'pending') return undefined;
  return { approved: approval.status === 'approved', comment: approval.comment ?? '' };
}

function nodeSpan(run: Run, node: string, start: string, status: string, error?: string): Span {
  return {
    span_id: newId(),
    parent_id: run.id,
    name: node,
    start,
    end: nowIso(),
    attributes: { agent_id: run.agent_id, run_id: run.id, node_id: node, status, ...(error ? { error } : {}) },
  };
}
