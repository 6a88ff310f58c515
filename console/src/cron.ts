// The server's own cron rules (src/domain/cron.ts, on cron-parser), bundled into the console so
// the form says exactly what POST /api/schedules would answer, before it is sent.
import { isTimezone, nextFireMs, validateCron } from '../../src/domain/cron.js';

export type CronCheck = { ok: true; expression: string; next: Date[] } | { ok: false; reason: string };

/** Validates `expression` in `timezone` and previews its next `count` fire times after `nowMs`. */
export function checkCron(expression: string, timezone: string, count = 5, nowMs = Date.now()): CronCheck {
  if (!isTimezone(timezone)) return { ok: false, reason: `timezone: "${timezone}" is not a known IANA time zone.` };
  let normalised: string;
  try {
    normalised = validateCron(expression, timezone);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const next: Date[] = [];
  let after = nowMs;
  for (let i = 0; i < count; i += 1) {
    after = nextFireMs(normalised, timezone, after);
    next.push(new Date(after));
  }
  return { ok: true, expression: normalised, next };
}

/** The time zones the browser knows, for the picker (UTC first). */
export function timeZones(): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...known.filter((z) => z !== 'UTC')];
}

/** A fire time as it reads in `timezone`, with the zone's abbreviation. */
export function inZone(date: Date, timezone: string): string {
  return new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(date);
}
