import type { RunJob, RunQueue } from '../ports/run-queue.js';
import { activeCarrier, tracer } from '../observability/tracer.js';

/**
 * The run queue whose jobs carry the W3C trace context they were queued in (`job.trace`: the
 * request that started or resumed the run), so the worker that takes a job continues that
 * trace. Without tracing it is the queue itself: nothing is added to the run path.
 */
export function withTraceContext(queue: RunQueue): RunQueue {
  if (!tracer()) return queue;
  const enqueue: RunQueue['enqueue'] = (job: RunJob, options) => {
    const carrier = job.trace ? undefined : activeCarrier();
    return queue.enqueue(carrier ? { ...job, trace: carrier } : job, options);
  };
  // A proxy rather than a copy of the interface: every other method is the queue's own.
  return new Proxy(queue, {
    get(target, property) {
      if (property === 'enqueue') return enqueue;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
