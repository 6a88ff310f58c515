import { nowIso } from './time.js';
import type { Run, RunEvent, Span } from './types.js';

/** A run event of `run` with the time: every field in the order the stream carries it. */
export function runEvent(run: Pick<Run, 'id' | 'session_id' | 'agent_id'>, body: Omit<RunEvent, 'session' | 'run_id' | 'agent_id' | 'ts'>, ts = nowIso()): RunEvent {
  return { ...body, session: run.session_id, run_id: run.id, agent_id: run.agent_id, ts };
}

/**
 * The root span of a run that ended with `status` (its `span_id` is the run id); `exported`:
 * the ids of the OpenTelemetry span of the attempt that ended it, when tracing is on.
 */
export function rootSpan(
  run: Pick<Run, 'id' | 'agent_id' | 'created_at'>,
  status: string,
  error?: string,
  end = nowIso(),
  exported?: Pick<Span, 'trace_id' | 'trace_span_id'>,
): Span {
  return {
    span_id: run.id,
    parent_id: '',
    name: `run ${run.agent_id}`,
    start: run.created_at,
    end,
    attributes: { agent_id: run.agent_id, run_id: run.id, status, ...(error ? { error } : {}) },
    ...exported,
  };
}
