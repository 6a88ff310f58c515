import { describe, expect, it } from 'vitest';
import { isTimezone, nextRunAfter, validateCron, validateTimezone } from '../../src/domain/cron.js';

const BAD: [string, RegExp][] = [
  ['* * * *', /expected exactly 5 fields .* got 4/],
  ['* * * * * *', /expected exactly 5 fields .* got 6/],
  ['61 * * * *', /got value 61 expected range 0-59/],
  ['* 24 * * *', /got value 24 expected range 0-23/],
  ['hello', /expected exactly 5 fields .* got 1/],
  ['', /expected exactly 5 fields .* got 0/],
  ['   ', /got 0/],
  ['*/0 * * * *', /cannot repeat at every 0 time/],
  ['0 0 0 * *', /expected range 1-31/],
  ['0 0 * 13 *', /expected range 1-12/],
  ['0 0 * * 8', /expected range 0-7/],
  ['5-1 * * * *', /Invalid range/],
  ['0 0 31 2 *', /Invalid explicit day of month/],
  ['0 0 L * *', /"L" is not a day-of-month name/],
  ['0 0 ? * *', /characters other than/],
  ['0 0 * * 1#2', /characters other than/],
  ['H * * * *', /"H" is not a minute name/],
  ['0 0 * jan-foo *', /"foo" is not a month name/],
  ['0 0 * * mon-jan', /"jan" is not a day-of-week name/],
  ['1.5 * * * *', /characters other than/],
  [`${'1,'.repeat(150)}1 * * * *`, /longer than 200 characters/],
];

describe('validateCron', () => {
  it.each(BAD)('refuses %j with invalid_cron and the reason', (expression, reason) => {
    let thrown: unknown;
    try {
      validateCron(expression);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'invalid_cron' });
    expect((thrown as Error).message).toMatch(/^cron_expr: /);
    expect((thrown as Error).message).toMatch(reason);
  });

  it.each([
    ['* * * * *', '* * * * *'],
    ['  */15   0-23/2 1,15 * sun ', '*/15 0-23/2 1,15 * sun'],
    ['0 9 * JAN-MAR MON-FRI', '0 9 * JAN-MAR MON-FRI'],
    ['0 0 * * 7', '0 0 * * 7'],
    ['30 4 1-7 * *', '30 4 1-7 * *'],
  ])('accepts %j as %j', (expression, normalised) => {
    expect(validateCron(expression)).toBe(normalised);
  });
});

describe('next_run', () => {
  it('is the next tick strictly after the given time, in the schedule’s time zone', () => {
    const at = Date.parse('2026-07-01T00:01:00.000Z');
    expect(nextRunAfter('* * * * *', 'UTC', at)).toBe('2026-07-01T00:02:00.000Z');
    expect(nextRunAfter('* * * * *', 'UTC', at - 1)).toBe('2026-07-01T00:01:00.000Z');
    // 09:00 in Berlin is 07:00 UTC in summer and 08:00 UTC in winter.
    expect(nextRunAfter('0 9 * * *', 'Europe/Berlin', at)).toBe('2026-07-01T07:00:00.000Z');
    expect(nextRunAfter('0 9 * * *', 'Europe/Berlin', Date.parse('2026-12-01T00:00:00Z'))).toBe('2026-12-01T08:00:00.000Z');
    expect(nextRunAfter('0 9 * * *', 'America/New_York', at)).toBe('2026-07-01T13:00:00.000Z');
  });
});

describe('timezone', () => {
  it('accepts IANA names and refuses anything else with bad_request', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5']) expect(isTimezone(zone)).toBe(true);
    for (const zone of ['', 'Mars/Olympus', 'Europe', 'UTC+99']) {
      expect(isTimezone(zone)).toBe(false);
      expect(() => validateTimezone(zone)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
  });
});
