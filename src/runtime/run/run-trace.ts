import { context, SpanKind, trace, type Link, type Tracer } from '@opentelemetry/api';
import type { Run, RunJob } from '../../domain/types.js';
import { splitErrorClass } from '../../domain/error-class.js';
import { contextOf, failSpan, tracingOptions } from '../../observability/tracer.js';

/**
 * Runs one attempt at a job's run inside its OpenTelemetry span, `run <agent id>` (a consumer
 * span: the job came through the run queue), so the engine's node, task and model spans nest
 * under it. A start continues the trace of whoever queued the job (`job.trace`: the API
 * request, a schedule fire). A resume after an approval begins a trace of its own linked to the
 * approver's request, whose trace the job carries, and to the trace the run was started in
 * (`job.run_trace`): the run's first attempt and its approval may be days apart. The span ends with the run's status (`failed` is an error, with its class);
 * the tenant is an attribute only when the operator opts in (`AGENTPLANE_OTEL_RECORD_TENANT`).
 */
export function tracedAttempt(tracer: Tracer, job: RunJob, attempt: () => Promise<Run | undefined>): Promise<Run | undefined> {
  const approved = job.kind === 'resume' && job.approval_id !== undefined;
  const queued = contextOf(job.trace);
  const by = trace.getSpanContext(queued);
  const links: Link[] = approved && by ? [{ context: by, attributes: { 'agentplane.link': 'approval', 'agentplane.approval.id': job.approval_id! } }] : [];
  const started = approved ? trace.getSpanContext(contextOf(job.run_trace)) : undefined;
  if (started) links.push({ context: started, attributes: { 'agentplane.link': 'run' } });
  const parent = approved ? context.active() : queued;
  const attributes = {
    'agentplane.run.id': job.run_id,
    'agentplane.run.kind': job.kind,
    'agentplane.session.id': job.session_id,
    'agentplane.agent.id': job.agent_id,
    'gen_ai.agent.name': job.agent_id,
    'gen_ai.conversation.id': job.session_id,
    ...(job.approval_id ? { 'agentplane.approval.id': job.approval_id } : {}),
    // Opt-in (AGENTPLANE_OTEL_RECORD_TENANT): a tenant may name a customer.
    ...(tracingOptions().recordTenant ? { 'agentplane.tenant': job.tenant } : {}),
  };
  return tracer.startActiveSpan(`run ${job.agent_id}`, { kind: SpanKind.CONSUMER, attributes, links, root: approved }, parent, async (span) => {
    try {
      const run = await attempt();
      span.setAttribute('agentplane.run.status', run?.status ?? 'not_run');
      // error.type: the class a graph's error kept in the run's error text (`RangeError: …`), else Error.
      if (run?.status === 'failed') failSpan(span, run.error ?? 'failed', splitErrorClass(run.error ?? '').error);
      return run;
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}
