import { conflict, type AppError } from './errors.js';

/**
 * Schedules one tenant may hold when the configuration does not say
 * (SERVICE_SCHEDULES_MAX_PER_TENANT), LangGraph crons included: each may fire every minute, and
 * a tick is a run and, for most, a new session.
 */
export const DEFAULT_SCHEDULES_PER_TENANT = 1000;

/** The refusal of a schedule past the tenant's cap: `conflict` (409), nothing stored. */
export function tooManySchedules(limit: number): AppError {
  return conflict(
    `The tenant has ${limit} schedules, the most SERVICE_SCHEDULES_MAX_PER_TENANT allows (LangGraph crons are schedules too); delete one first.`,
  );
}
