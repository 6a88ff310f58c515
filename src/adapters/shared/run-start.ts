import { conflict } from '../../domain/errors.js';
import { ACTIVE_RUN_STATUSES, MAX_QUEUED_BEHIND, type RunStatus } from '../../domain/types.js';

/**
 * The rule of a run's start on a session: one active (queued, running, interrupted) run per
 * session; a further start is refused, or waits behind it when it asks to (`multitask:
 * "enqueue"`) and fewer than MAX_QUEUED_BEHIND wait already. The memory Store decides with
 * {@link decideRunStart}; the Redis Store's createRun script (lua/createRun-14.lua) takes the
 * same decision in Lua, in the step that writes the run, and mirrors it: change both together.
 * The one difference is a full queue's message: Redis answers it as a busy session.
 *
 * What follows is each store's own: a run that starts becomes the session's current run
 * (queued, for a worker), binds a session created before its first run to its agent, and the
 * session keeps its newest `runsRetain` runs; a run behind waits until the current one ends.
 */
export interface SessionAtStart {
  /** The session's agent, '' while no run has bound it; undefined when the start creates the session. */
  agentId: string | undefined;
  /** The status of the session's current run; undefined when it has none. */
  currentStatus: RunStatus | undefined;
  /** How many runs wait behind the current one. */
  queuedBehind: number;
}

/** How a start goes on: its run becomes the session's current run, or waits behind the active one. */
export type RunStart = 'current' | 'behind';

/** Decides a start on a session; a refused one throws its conflict (nothing is written yet). */
export function decideRunStart(session: SessionAtStart, start: { agent_id: string; behind?: boolean }): RunStart {
  const { agentId, currentStatus } = session;
  if (agentId !== undefined && agentId !== '' && agentId !== start.agent_id) throw conflict(`This session belongs to agent "${agentId}".`);
  if (currentStatus === undefined || !ACTIVE_RUN_STATUSES.includes(currentStatus)) return 'current';
  if (!start.behind) throw conflict('This session already has a queued, running or interrupted run.');
  if (session.queuedBehind >= MAX_QUEUED_BEHIND) throw conflict(`This session already has ${MAX_QUEUED_BEHIND} runs queued behind its active one.`);
  return 'behind';
}
