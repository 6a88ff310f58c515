import type { Logger } from 'pino';
import { AppError, badRequest, notFound } from '../domain/errors.js';
import { webhookUrlProblem } from '../domain/run-webhook.js';
import { newId } from '../domain/time.js';
import { ACTIVE_RUN_STATUSES, CANCELLED_ERROR, MAX_QUEUED_BEHIND, type Approval, type Run } from '../domain/types.js';
import type { RunControl, RunTicket, StartRunOptions, StartRunRequest } from '../ports/run-control.js';
import type { RunJob, RunQueue } from '../ports/run-queue.js';
import type { ApprovalDecision, CreatedRun, Store } from '../ports/store.js';
import type { AgentRegistry } from './registry.js';
import type { RunLifecycle } from './run-lifecycle.js';
import { isGraphAgent } from './agent.js';
import { approvalResumeTrace, runTraceField } from './run-trace-context.js';

export interface RunControlOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  queue: RunQueue;
  agents: AgentRegistry;
  lifecycle: RunLifecycle;
  /** RUN_TIMEOUT_MS: the deadline of a run started without `timeout_ms`; 0 for none. @defaultValue 0 */
  defaultTimeoutMs?: number;
  /** @defaultValue Date.now */
  clock?: () => number;
  /** Where a start that failed half-way says it could not end its run (the reaper does then). */
  logger?: Pick<Logger, 'warn'>;
  /** A webhook may be a path: the processes have the `http.app` of langgraph.json to deliver it to. @defaultValue false */
  webhookPaths?: boolean;
}

/** The error of a run ended because its start failed after writing it. */
export const UNSTARTED_ERROR = 'The run was not started: its start failed (the client got an error) after the run was written.';

/** The node a LangGraph run starts from (LangGraph's START). */
export const GRAPH_START = '__start__';

/** Tries of `multitask: "interrupt"` (cancel the active run, create) before it answers 409. */
const INTERRUPT_ATTEMPTS = 5;

/**
 * The one implementation of starting, resuming, unblocking and cancelling runs, shared by the
 * HTTP routes, schedule fires, timers and the chat/webhook bridges. Every state change is one
 * atomic Store call; the enqueue after it is idempotent (job ids derive from the run), so
 * repeating a resume of a queued run re-delivers a lost job instead of starting a second run.
 */
export function createRunControl(options: RunControlOptions): RunControl {
  const { store, queue, agents, lifecycle } = options;
  const clock = options.clock ?? Date.now;

  const enqueue = async (job: RunJob): Promise<RunTicket> => {
    await queue.enqueue(job);
    return { run_id: job.run_id, session_id: job.session_id, status: 'queued' };
  };

  /**
   * A start answered with an error after its run was written, without an Idempotency-Key: the
   * run ends `failed` now, so nothing runs that the client was told failed and its session
   * takes the retry. When storage cannot take even that, the run has no job and the reaper
   * ends it within two RUN_REAPER_INTERVAL_MS.
   */
  const abandon = async (tenant: string, runId: string): Promise<void> => {
    try {
      await lifecycle.end(tenant, runId, { status: 'failed', error: UNSTARTED_ERROR, from: ['queued'] });
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return;
      options.logger?.warn({ err: error, tenant, run_id: runId }, 'could not end a run whose start failed; the reaper ends it');
    }
  };

  /** Enqueues a created run's job (a run queued behind gets it when promoted); see {@link RunControl.startRun}. */
  const deliver = async (tenant: string, run: CreatedRun, keyed: boolean, delayMs?: number): Promise<RunTicket> => {
    const ticket: RunTicket = { run_id: run.id, session_id: run.session_id, status: 'queued' };
    const job: RunJob = { kind: 'start', tenant, run_id: run.id, session_id: run.session_id, agent_id: run.agent_id };
    if (run.replayed) {
      // The first start may have failed between writing the run and enqueuing its job: enqueued
      // again here (the job id derives from the run, so it exists once).
      if (run.status === 'queued' && !run.behind && !run.approval_id) await queue.enqueue(job);
      return { ...ticket, replayed: run.status };
    }
    if (run.unconfirmed && !keyed) {
      await abandon(tenant, run.id);
      throw run.unconfirmed;
    }
    if (!run.behind) {
      try {
        await queue.enqueue(job, delayMs ? { delayMs } : undefined);
      } catch (error) {
        if (!keyed) await abandon(tenant, run.id);
        throw error;
      }
    }
    if (run.unconfirmed) throw run.unconfirmed;
    return ticket;
  };

  const control: RunControl = {
    async startRun(tenant: string, request: StartRunRequest, startOptions: StartRunOptions = {}): Promise<RunTicket> {
      const agent = agents.get(request.agent_id);
      if (!agent) throw new AppError('unknown_agent', `Agent "${request.agent_id}" is not registered.`);
      const sessionId = request.session_id ?? newId();
      const timeoutMs = request.timeout_ms ?? options.defaultTimeoutMs ?? 0;
      // A native run keeps its webhook, `temporary` and its trace (tracing on) as the only fields of its stored input (its engine reads none).
      const kept = { ...webhookOf(request, options.webhookPaths ?? false), ...(request.temporary ? { temporary: true } : {}), ...runTraceField() };
      const { idempotency } = startOptions;
      // Past the tenant's queued cap nothing is stored: 429 with Retry-After. A replay of a
      // keyed start holds no new place: it answers as the first start did.
      if (!startOptions.roomChecked) {
        await queue.checkRoom(tenant).catch(async (error: unknown) => {
          if (!idempotency || !(await store.runs.hasIdempotencyKey(tenant, idempotency))) throw error;
        });
      }
      for (let attempt = 1; ; attempt += 1) {
        const runId = newId();
        let run: CreatedRun;
        try {
          run = await store.runs.createRun(tenant, {
            run_id: runId,
            session_id: sessionId,
            agent_id: agent.id,
            // A graph's run starts at its START with the state as it is: the input is the
            // graph's to apply (through its reducers), kept with the run for its engine.
            ...(isGraphAgent(agent)
              ? { start: { node_id: GRAPH_START, input: {} }, graph_input: JSON.stringify({ ...(request.graph ?? { input: request.input ?? {} }), ...kept }) }
              : { start: { node_id: agent.entry, input: request.input ?? {} }, ...(Object.keys(kept).length > 0 ? { graph_input: JSON.stringify(kept) } : {}) }),
            ...(timeoutMs > 0 ? { deadline_ms: clock() + timeoutMs } : {}),
            ...(request.multitask === 'enqueue' ? { behind: true } : {}),
            ...(startOptions.waited ? { waited: true } : {}),
            ...(idempotency ? { idempotency } : {}),
          });
        } catch (error) {
          // Unavailable: the write may have landed all the same (a stalled Redis runs it when it resumes).
          if (!idempotency && error instanceof AppError && error.code === 'unavailable') await abandon(tenant, runId);
          if (request.multitask !== 'interrupt' || attempt >= INTERRUPT_ATTEMPTS || !(error instanceof AppError) || error.code !== 'conflict') throw error;
          // The session is busy: cancel its active run (a concurrent request may have replaced it) and try again.
          // A session of another agent is refused as it is: nothing of it is touched.
          const active = await store.runs.latestRun(tenant, sessionId);
          if (!active || active.agent_id !== agent.id || !ACTIVE_RUN_STATUSES.includes(active.status)) throw error;
          // The runs queued behind go first, so ending the active one starts none of them.
          const end = { status: 'cancelled', error: 'interrupted by a new run (multitask: interrupt)', by: 'multitask' } as const;
          const waiting = await store.runs.listRuns(tenant, sessionId, { limit: MAX_QUEUED_BEHIND + 1, offset: 0 });
          for (const run of waiting) if (run.id !== active.id && run.status === 'queued') await lifecycle.end(tenant, run.id, { ...end, from: ['queued'] });
          await lifecycle.end(tenant, active.id, end);
          continue;
        }
        return deliver(tenant, run, idempotency !== undefined, request.delay_ms);
      }
    },

    async resumeSession(tenant: string, sessionId: string): Promise<RunTicket> {
      const session = await store.sessions.getSession(tenant, sessionId);
      if (!session || !(await store.sessions.getCheckpoint(tenant, sessionId))) throw notFound('A checkpoint of this session');
      // A LangGraph thread edited or copied before its first run has state but no agent yet: its first run names one.
      if (session.agent_id === '') throw new AppError('conflict', 'This session has no run yet: start one with its agent_id (POST /api/runs).');
      const latest = await store.runs.latestRun(tenant, sessionId);
      if (latest?.status === 'queued') {
        // A queued run whose job was lost (a crash between decision and enqueue) is re-delivered.
        const approvalId = await decidedApprovalOf(store, tenant, latest.approval_id);
        return enqueue({
          kind: approvalId ? 'resume' : 'start',
          tenant,
          run_id: latest.id,
          session_id: sessionId,
          agent_id: latest.agent_id,
          ...(approvalId ? { approval_id: approvalId } : {}),
        });
      }
      if (latest?.status === 'running') throw new AppError('conflict', 'A run of this session is running.');
      if (latest?.status === 'interrupted') throw new AppError('conflict', 'An approval of this session is pending.');
      await queue.checkRoom(tenant);
      const run = await store.runs.createRun(tenant, { run_id: newId(), session_id: sessionId, agent_id: session.agent_id });
      return enqueue({ kind: 'resume', tenant, run_id: run.id, session_id: sessionId, agent_id: run.agent_id });
    },

    async answerApproval(tenant: string, approvalId: string, decision: ApprovalDecision): Promise<Approval> {
      const { unconfirmed, ...approval } = await store.approvals.decideApproval(tenant, approvalId, decision);
      const run = { id: approval.run_id, session_id: approval.session_id, agent_id: approval.agent_id };
      await lifecycle.publish(tenant, run, {
        type: 'approval_decided',
        approval_id: approval.id,
        approved: approval.status === 'approved',
        by: decision.decided_by,
      });
      await queue.enqueue({
        kind: 'resume',
        tenant,
        run_id: approval.run_id,
        session_id: approval.session_id,
        agent_id: approval.agent_id,
        approval_id: approval.id,
        ...(await approvalResumeTrace(store, tenant, approval)),
      });
      // Not confirmed by the replicas (REDIS_WAIT_REPLICAS): 503 now that its resume is queued.
      if (unconfirmed) throw unconfirmed;
      return approval;
    },

    async cancelRun(tenant: string, runId: string, by: string, error = CANCELLED_ERROR): Promise<Run> {
      const ended = await lifecycle.end(tenant, runId, { status: 'cancelled', error, by });
      if (ended) return ended;
      const run = await store.runs.getRun(tenant, runId);
      if (!run) throw notFound('The run');
      throw new AppError('conflict', `The run is already ${run.status}.`);
    },

    async queueDepth(tenant: string) {
      const [depth, workers] = await Promise.all([queue.depth(tenant), queue.liveWorkers()]);
      return { ...depth, workers };
    },
  };
  return control;
}

/** The run's webhook (`webhook`, or a graph's `graph.webhook`) as a field to keep with it; `bad_request` when it is no webhook URL. */
function webhookOf(request: StartRunRequest, webhookPaths: boolean): { webhook?: string } {
  const url = request.webhook ?? request.graph?.webhook;
  if (url === undefined) return {};
  const problem = typeof url === 'string' ? webhookUrlProblem(url, { paths: webhookPaths }) : 'not a string';
  if (problem) throw badRequest(`webhook: ${problem}.`);
  return { webhook: url as string };
}

/** The run's latest approval when it is decided: a queued run resumes with its answer. */
async function decidedApprovalOf(store: Pick<Store, 'approvals'>, tenant: string, approvalId: string | undefined): Promise<string | undefined> {
  if (!approvalId) return undefined;
  const approval = await store.approvals.getApproval(tenant, approvalId);
  return approval && (approval.status === 'approved' || approval.status === 'rejected') ? approval.id : undefined;
}
