import { describe, expect, it } from 'vitest';
import { checkCron } from '../../console/src/cron.js';
import { diffStates, parseJsonObject, patchOf } from '../../console/src/json.js';
import { href, parseRoute } from '../../console/src/router.js';
import { AppError } from '../../src/domain/errors.js';
import { validateCron } from '../../src/domain/cron.js';

/* The console's pure logic, without a browser: what its editors send and what its cron check says. */

describe('the state editor', () => {
  it('sends only the changed and added keys, and reports removed ones (a patch cannot remove)', () => {
    const base = { topic: 'a', draft: 'x', nested: { n: 1, m: [1, 2] } };
    expect(patchOf(base, { topic: 'a', draft: 'y', nested: { m: [1, 2], n: 1 }, extra: null })).toEqual({ patch: { draft: 'y', extra: null }, removed: [] });
    expect(patchOf(base, { topic: 'a' })).toEqual({ patch: {}, removed: ['draft', 'nested'] });
  });

  it('diffs top-level keys as added, removed or changed, in key order; key order inside values does not count', () => {
    expect(diffStates({ b: 1, a: { x: 1, y: 2 }, gone: true }, { a: { y: 2, x: 1 }, b: 2, c: 'new' })).toEqual([
      { key: 'b', kind: 'changed', before: 1, after: 2 },
      { key: 'c', kind: 'added', after: 'new' },
      { key: 'gone', kind: 'removed', before: true },
    ]);
  });

  it('accepts only a JSON object', () => {
    expect(parseJsonObject('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
    for (const text of ['[1]', '1', 'null', '"s"']) expect(parseJsonObject(text)).toEqual({ ok: false, error: 'Must be a JSON object: { "key": value, … }' });
    expect(parseJsonObject('{"a": ')).toMatchObject({ ok: false, error: expect.stringMatching(/^Not valid JSON: /) });
  });
});

describe('the cron check of the schedule form', () => {
  it.each(['61 * * * *', '* * * *', '0 0 L * *', '*/5 * * * * *', '0 12 * JANUARY *', '0 12 ? * *'])(
    'says exactly what the server says about %s',
    (expression) => {
      let server: string | undefined;
      try {
        validateCron(expression, 'UTC');
      } catch (error) {
        server = (error as AppError).message;
      }
      expect(server).toMatch(/^cron_expr: /);
      expect(checkCron(expression, 'UTC')).toEqual({ ok: false, reason: server });
    },
  );

  it('refuses an unknown time zone, and previews five rising fire times of a valid expression', () => {
    expect(checkCron('0 9 * * *', 'Mars/Olympus')).toEqual({ ok: false, reason: 'timezone: "Mars/Olympus" is not a known IANA time zone.' });
    const now = Date.parse('2026-03-07T12:00:00.000Z');
    const check = checkCron(' 0  9 * * * ', 'Europe/Berlin', 5, now);
    expect(check).toEqual({
      ok: true,
      expression: '0 9 * * *',
      // Berlin moves to summer time on 29 March; in early March 09:00 is 08:00 UTC.
      next: ['2026-03-08', '2026-03-09', '2026-03-10', '2026-03-11', '2026-03-12'].map((day) => new Date(`${day}T08:00:00.000Z`)),
    });
  });
});

describe('the routes of the fragment', () => {
  it('reads a malformed % escape as a broken link, not an exception', () => {
    expect(parseRoute('#/sessions/%E0%A4%A')).toEqual({ screen: 'broken-link', fragment: '#/sessions/%E0%A4%A' });
    expect(parseRoute('#/inbox/%')).toEqual({ screen: 'broken-link', fragment: '#/inbox/%' });
  });

  it('reads back every link it makes, with ids that need escaping', () => {
    const id = 'a/b c%d:é';
    for (const route of [
      { screen: 'inbox', approvalId: id },
      { screen: 'inbox' },
      { screen: 'decided' },
      { screen: 'sessions' },
      { screen: 'session', sessionId: id },
      { screen: 'runs' },
      { screen: 'run-new' },
      { screen: 'schedules' },
      { screen: 'schedule-new' },
    ] as const) {
      expect(parseRoute(href(route))).toEqual(route);
    }
    expect(parseRoute('#/nowhere')).toBeUndefined();
  });
});
