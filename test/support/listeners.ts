import type { EventBus } from '../../src/ports/event-bus.js';

/**
 * The live listeners an event bus holds in this process. Both adapters count them for leak
 * checks; the count is a diagnostic of the adapters, not part of the EventBus port.
 */
export function listenerCount(bus: EventBus): number {
  const counting = bus as EventBus & { listenerCount?: () => number };
  if (typeof counting.listenerCount !== 'function') throw new Error('This event bus does not count its listeners.');
  return counting.listenerCount();
}
