import { AppError, notFound } from '../domain/errors.js';
import { newId, nowIso } from '../domain/time.js';
import type { Approval } from '../domain/types.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunControl, RunTicket, StartRunRequest } from '../ports/run-control.js';
import type { RunJob, RunQueue } from '../ports/run-queue.js';
import type { ApprovalDecision, Store } from '../ports/store.js';
import type { AgentRegistry } from './registry.js';

export interface RunControlOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  queue: RunQueue;
  events: EventBus;
  agents: AgentRegistry;
}

/**
 * The one implementation of starting, resuming and unblocking runs, shared by the HTTP routes,
 * schedule fires and the chat/webhook bridges. Every state change is one atomic Store call;
 * the enqueue after it is idempotent (job ids derive from the run), so repeating a resume of
 * a queued run re-delivers a lost job instead of starting a second run.
 */
export function createRunControl(options: RunControlOptions): RunControl {
  const { store, queue, events, agents } = options;

  const enqueue = async (job: RunJob): Promise<RunTicket> => {
    await queue.enqueue(job);
    return { run_id: job.run_id, session_id: job.session_id, status: 'queued' };
  };

  return {
    async startRun(tenant: string, request: StartRunRequest): Promise<RunTicket> {
      const agent = agents.get(request.agent_id);
      if (!agent) throw new AppError('unknown_agent', `Agent "${request.agent_id}" is not registered.`);
      const run = await store.runs.createRun(tenant, {
        run_id: newId(),
        session_id: request.session_id ?? newId(),
        agent_id: agent.id,
        start: { node_id: agent.entry, input: request.input ?? {} },
      });
      return enqueue({ kind: 'start', tenant, run_id: run.id, session_id: run.session_id, agent_id: run.agent_id });
    },

    async resumeSession(tenant: string, sessionId: string): Promise<RunTicket> {
      const session = await store.sessions.getSession(tenant, sessionId);
      if (!session || !(await store.sessions.getCheckpoint(tenant, sessionId))) throw notFound('A checkpoint of this session');
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
      const run = await store.runs.createRun(tenant, { run_id: newId(), session_id: sessionId, agent_id: session.agent_id });
      return enqueue({ kind: 'resume', tenant, run_id: run.id, session_id: sessionId, agent_id: run.agent_id });
    },

    async answerApproval(tenant: string, approvalId: string, decision: ApprovalDecision): Promise<Approval> {
      const approval = await store.approvals.decideApproval(tenant, approvalId, decision);
      await events.publish(tenant, {
        type: 'approval_decided',
        session: approval.session_id,
        run_id: approval.run_id,
        agent_id: approval.agent_id,
        ts: nowIso(),
        approval_id: approval.id,
        approved: approval.status === 'approved',
      });
      await queue.enqueue({
        kind: 'resume',
        tenant,
        run_id: approval.run_id,
        session_id: approval.session_id,
        agent_id: approval.agent_id,
        approval_id: approval.id,
      });
      return approval;
    },
  };
}

/** The run's latest approval when it is decided: a queued run resumes with its answer. */
async function decidedApprovalOf(store: Pick<Store, 'approvals'>, tenant: string, approvalId: string | undefined): Promise<string | undefined> {
  if (!approvalId) return undefined;
  const approval = await store.approvals.getApproval(tenant, approvalId);
  return approval && approval.status !== 'pending' ? approval.id : undefined;
}
