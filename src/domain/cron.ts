import { CronExpressionParser } from 'cron-parser';
import { AppError } from './errors.js';

/** The default time zone of a schedule. */
export const DEFAULT_TIMEZONE = 'UTC';

/** Field names of a standard cron expression, in order. */
const FIELDS = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;

/** Names allowed in the month and day-of-week fields (case-insensitive). */
const NAMES: Partial<Record<(typeof FIELDS)[number], readonly string[]>> = {
  month: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  'day-of-week': ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
};

/** Longer expressions are refused before they reach the parser. */
const MAX_EXPRESSION_LENGTH = 200;

const invalid = (reason: string): AppError => new AppError('invalid_cron', `cron_expr: ${reason}`);

/**
 * Checks a standard 5-field cron expression (minute hour day-of-month month day-of-week:
 * numbers, `*`, ranges, lists, steps, and month / weekday names) and returns it normalised
 * to single spaces. cron-parser's extensions (seconds, `L`, `W`, `#`, `?`, `H`) are refused.
 * Throws AppError `invalid_cron` whose message carries the reason, the parser's when it
 * found one.
 */
export function validateCron(expression: string, timezone: string = DEFAULT_TIMEZONE): string {
  if (expression.length > MAX_EXPRESSION_LENGTH) throw invalid(`longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const fields = expression.trim().split(/\s+/).filter((f) => f !== '');
  if (fields.length !== FIELDS.length) {
    throw invalid(`expected exactly 5 fields (${FIELDS.join(' ')}), got ${fields.length}`);
  }
  fields.forEach((field, i) => checkField(FIELDS[i]!, field));
  const normalised = fields.join(' ');
  try {
    // strict mode would demand a seconds field; the field count is checked above instead.
    CronExpressionParser.parse(normalised, { tz: timezone }).next();
  } catch (error) {
    throw new AppError('invalid_cron', `cron_expr: ${(error as Error).message}`, { cause: error });
  }
  return normalised;
}

function checkField(name: (typeof FIELDS)[number], field: string): void {
  if (!/^[0-9A-Za-z*,/-]+$/.test(field)) throw invalid(`${name} field "${field}" has characters other than digits, names, * , / -`);
  for (const token of field.split(/[,/-]/)) {
    if (!/[A-Za-z]/.test(token)) continue;
    if (!NAMES[name]?.includes(token.toLowerCase())) throw invalid(`${name} field "${field}": "${token}" is not a ${name} name`);
  }
}

/** Whether `timezone` is an IANA time zone name this runtime knows. */
export function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone.length > 0;
  } catch {
    return false;
  }
}

/** Throws AppError `bad_request` for an unknown time zone. */
export function validateTimezone(timezone: string): string {
  if (!isTimezone(timezone)) throw new AppError('bad_request', `timezone: "${timezone}" is not a known IANA time zone.`);
  return timezone;
}

/**
 * The first time strictly after `afterMs` at which a valid expression fires in `timezone`,
 * in epoch milliseconds. The same parser and options BullMQ's job schedulers use.
 */
export function nextFireMs(expression: string, timezone: string, afterMs: number): number {
  return CronExpressionParser.parse(expression, { tz: timezone, currentDate: new Date(afterMs) }).next().getTime();
}

/** {@link nextFireMs} as an RFC 3339 timestamp (the `next_run` of a schedule). */
export function nextRunAfter(expression: string, timezone: string, afterMs: number): string {
  return new Date(nextFireMs(expression, timezone, afterMs)).toISOString();
}
