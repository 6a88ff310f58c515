import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { runCli, spawnCli, startApi, type CliProcess, type CliResult } from './cli.js';

/** The CLI through its compiled bin against `agentplane dev`, a real process on a free port. */
let url: string;
let server: CliProcess;
const cli = (...args: string[]) => runCli(args, { AGENTPLANE_URL: url });
/** The parsed stdout of a command that must have succeeded. */
function json(result: CliResult | string): Record<string, any> {
  if (typeof result === 'string') return JSON.parse(result) as Record<string, any>;
  expect(result, 'the command succeeded').toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, any>;
}

beforeAll(async () => {
  await ensureBuilt();
  ({ url, server } = await startApi('dev'));
}, 300_000);
afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
});

describe('agentplane against agentplane dev', () => {
  it('a human-review run: started with --wait, approved with --wait, followed by events tail to completed', async () => {
    const session = `cli-${randomUUID()}`;
    const tail = spawnCli(['events', 'tail', '--session', session, '--until', 'completed'], { AGENTPLANE_URL: url });
    await tail.waitForLine('stderr', /^connected to /);

    const started = await cli('runs', 'start', 'human-review', '--session', session, '--input', '{"topic":"cli"}', '--wait', '--json');
    expect(started).toMatchObject({ code: 0, stderr: '' });
    const paused = json(started.stdout);
    expect(paused).toMatchObject({ status: 'interrupted', session_id: session, approval: { prompt: 'Publish the draft?' } });

    const inbox = await cli('approvals', 'list');
    expect(inbox.code).toBe(0);
    expect(inbox.stdout).toMatch(new RegExp(`^${paused.approval.id}\\s+Publish the draft\\?\\s+human-review\\s+${session}`, 'm'));

    const approved = await cli('approvals', 'approve', paused.approval.id, '--comment', 'lgtm', '--wait');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`approval ${paused.approval.id}  approved`);
    expect(approved.stdout).toContain(`run ${paused.id}  completed  agent human-review  session ${session}`);
    expect(approved.stdout).toContain('"outcome":"published"');

    const followed = await tail.exited;
    expect(followed.code).toBe(0);
    const lines = followed.stdout.trim().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[2])).toEqual([
      'node_start', 'node_end', 'node_start', 'interrupted', 'approval_decided', 'node_start', 'node_end', 'node_start', 'node_end', 'completed',
    ]);
    expect(lines.every((line) => line.includes(`session=${session} run=${paused.id}`))).toBe(true);

    // Resumed after the interruption: the rest of the run, as JSON lines.
    const interrupted = lines[3]!.split(' ')[0]!;
    const resumed = await cli('events', 'tail', '--session', session, '--last-event-id', interrupted, '--until', 'completed', '--json');
    expect(resumed.code).toBe(0);
    const events = resumed.stdout.trim().split('\n').map(json);
    expect(events.map((e) => e.event.type)).toEqual(['approval_decided', 'node_start', 'node_end', 'node_start', 'node_end', 'completed']);
    expect(events.map((e) => e.id)).toEqual(lines.slice(4).map((line) => line.split(' ')[0]));
  });

  it('--json output of the read and write commands parses', async () => {
    const session = `cli-${randomUUID()}`;
    const run = json(await cli('runs', 'start', 'echo', '--session', session, '--input', '{"text":"hi"}', '--json'));
    expect(run).toMatchObject({ session_id: session, status: 'queued' });
    await waitFor('the echo run to complete', async () => json(await cli('runs', 'get', run.run_id, '--json')).status === 'completed');

    expect(json(await cli('runs', 'list', '--session', session, '--json')).runs).toHaveLength(1);
    expect(json(await cli('sessions', 'list', '--agent', 'echo', '--json')).sessions.map((s: any) => s.id)).toContain(session);
    const latest = json(await cli('sessions', 'state', session, '--json'));
    expect(latest.state).toEqual({ text: 'hi', echoed: true });
    const patched = json(await cli('sessions', 'patch', session, '{"text":"edited"}', '--if-match', String(latest.seq_num), '--json'));
    expect(patched).toMatchObject({ seq_num: latest.seq_num + 1, state: { text: 'edited', echoed: true } });
    const stale = await cli('sessions', 'patch', session, '{"text":"again"}', '--if-match', String(latest.seq_num));
    expect(stale).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 412 precondition_failed: /) });
    expect(json(await cli('sessions', 'history', session, '--limit', '2', '--json'))).toMatchObject({ next_offset: 2 });
    expect(json(await cli('approvals', 'list', '--json'))).toHaveProperty('approvals');

    const schedule = json(await cli('schedules', 'create', 'echo', '*/5 * * * *', '--timezone', 'Europe/Berlin', '--json'));
    expect(schedule).toMatchObject({ agent_id: 'echo', cron_expr: '*/5 * * * *', timezone: 'Europe/Berlin', new_session: true });
    expect(json(await cli('schedules', 'list', '--json')).schedules.map((s: any) => s.id)).toContain(schedule.id);
    expect(json(await cli('schedules', 'delete', schedule.id, '--json'))).toEqual({ id: schedule.id, status: 'deleted' });
  });

  it('runs list: the tenant\'s runs without --session, filtered by --status and --agent, paged, and combined with --session', async () => {
    const session = `cli-${randomUUID()}`;
    const first = json(await cli('runs', 'start', 'human-review', '--session', session, '--input', '{"topic":"lists"}', '--wait', '--json'));
    expect(first.status).toBe('interrupted');
    expect(json(await cli('runs', 'cancel', first.id, '--json')).status).toBe('cancelled');
    const second = json(await cli('runs', 'start', 'human-review', '--session', session, '--input', '{"topic":"lists"}', '--wait', '--json'));
    expect(second.status).toBe('interrupted');
    const echo = json(await cli('runs', 'start', 'echo', '--input', '{"text":"lists"}', '--wait', '--json'));
    expect(echo).toMatchObject({ status: 'completed' });
    expect(echo.session_id).not.toBe(session);
    const ids = (result: CliResult) => (json(result).runs as Record<string, any>[]).map((r) => r.id as string);

    // Across sessions, newest first; --limit and --offset page it.
    const all = json(await cli('runs', 'list', '--limit', '500', '--json')).runs as Record<string, any>[];
    expect(all.slice(0, 3).map((r) => r.id)).toEqual([echo.id, second.id, first.id]);
    expect(ids(await cli('runs', 'list', '--limit', '2', '--json'))).toEqual([echo.id, second.id]);
    expect(ids(await cli('runs', 'list', '--limit', '1', '--offset', '1', '--json'))).toEqual([second.id]);

    // Filters, alone and together: every run listed matches, and none that matches is missing.
    const interrupted = json(await cli('runs', 'list', '--status', 'interrupted', '--agent', 'human-review', '--limit', '500', '--json')).runs as Record<string, any>[];
    expect(interrupted.map((r) => r.id)).toEqual(all.filter((r) => r.status === 'interrupted' && r.agent_id === 'human-review').map((r) => r.id));
    expect(interrupted.map((r) => r.id)).toContain(second.id);
    const cancelled = ids(await cli('runs', 'list', '--status', 'cancelled', '--limit', '500', '--json'));
    expect(cancelled).toEqual(all.filter((r) => r.status === 'cancelled').map((r) => r.id));
    expect(cancelled).toContain(first.id);
    expect(cancelled).not.toContain(second.id);
    const echoes = ids(await cli('runs', 'list', '--agent', 'echo', '--limit', '500', '--json'));
    expect(echoes).toEqual(all.filter((r) => r.agent_id === 'echo').map((r) => r.id));
    expect(echoes).toContain(echo.id);

    // --session still works, and the filters narrow it.
    expect(ids(await cli('runs', 'list', '--session', session, '--json'))).toEqual([second.id, first.id]);
    expect(ids(await cli('runs', 'list', '--session', session, '--status', 'cancelled', '--json'))).toEqual([first.id]);
    expect(ids(await cli('runs', 'list', '--session', session, '--agent', 'echo', '--json'))).toEqual([]);

    const human = await cli('runs', 'list', '--session', session, '--status', 'interrupted');
    expect(human).toMatchObject({ code: 0, stderr: '' });
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+AGENT_ID\s+SESSION_ID\s+CREATED_AT\s+ERROR$/);
    expect(lines[1]).toMatch(new RegExp(`^${second.id}\\s+interrupted\\s+human-review\\s+${session}\\s+\\S+\\s+-$`));
    expect(await cli('runs', 'list', '--agent', 'no-such-agent')).toMatchObject({ code: 0, stdout: '(none)\n' });

    expect(await cli('runs', 'list', '--status', 'paused')).toMatchObject({ code: 2, stderr: expect.stringContaining('Allowed choices are queued, running, interrupted') });
    expect(await cli('runs', 'list', '--session', `cli-missing-${randomUUID()}`)).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 404 not_found: /) });
  });

  it('approvals list --status decided (newest decision first) and approvals get <id>, pending or decided', async () => {
    const session = `cli-${randomUUID()}`;
    const first = json(await cli('runs', 'start', 'human-review', '--session', session, '--wait', '--json'));
    await cli('runs', 'cancel', first.id);
    const second = json(await cli('runs', 'start', 'human-review', '--session', session, '--wait', '--json'));
    const [closed, asked] = [first.approval.id as string, second.approval.id as string];

    const pending = json(await cli('approvals', 'list', '--json')).approvals as Record<string, any>[];
    expect(pending.map((a) => a.id)).toContain(asked);
    expect(pending.map((a) => a.id)).not.toContain(closed);
    expect(pending.every((a) => a.status === 'pending')).toBe(true);
    expect(json(await cli('approvals', 'list', '--status', 'pending', '--json')).approvals).toEqual(pending);
    expect(json(await cli('approvals', 'get', asked, '--json'))).toMatchObject({ id: asked, status: 'pending', prompt: 'Publish the draft?', session_id: session });
    expect(json(await cli('approvals', 'get', closed, '--json'))).toMatchObject({ id: closed, status: 'cancelled', run_id: first.id });

    expect(await cli('approvals', 'approve', asked, '--comment', 'lists ok')).toMatchObject({ code: 0 });
    const decided = json(await cli('approvals', 'list', '--status', 'decided', '--json')).approvals as Record<string, any>[];
    expect(decided[0]).toMatchObject({ id: asked, status: 'approved', comment: 'lists ok', decided_at: expect.any(String) });
    expect(decided.findIndex((a) => a.id === closed)).toBeGreaterThan(0);
    expect(decided.every((a) => a.status !== 'pending')).toBe(true);
    expect(json(await cli('approvals', 'list', '--json')).approvals.map((a: any) => a.id)).not.toContain(asked);
    expect(json(await cli('approvals', 'list', '--status', 'decided', '--limit', '1', '--offset', '1', '--json')).approvals).toEqual([decided[1]]);

    const table = await cli('approvals', 'list', '--status', 'decided');
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+PROMPT\s+AGENT_ID\s+SESSION_ID\s+DECIDED_BY\s+DECIDED_AT\s+COMMENT\n/);
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${asked}\\s+approved\\s+Publish the draft\\?\\s+human-review\\s+${session}\\s+\\S+\\s+\\S+\\s+lists ok$`));
    expect(table.stdout).toMatch(new RegExp(`^${closed}\\s+cancelled\\s+Publish the draft\\?`, 'm'));

    const one = await cli('approvals', 'get', asked);
    expect(one).toMatchObject({ code: 0, stderr: '' });
    expect(one.stdout).toMatch(/^id\s+\S+$/m);
    expect(one.stdout).toMatch(/^status\s+approved$/m);
    expect(one.stdout).toMatch(/^prompt\s+Publish the draft\?$/m);
    expect(one.stdout).toMatch(/^comment\s+lists ok$/m);

    expect(await cli('approvals', 'get', 'no-such-approval')).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^agentplane: 404 not_found: /) });
    expect(await cli('approvals', 'list', '--status', 'approved')).toMatchObject({ code: 2, stderr: expect.stringContaining('Allowed choices are pending, decided') });
  });

  it('approvals reject <id> --resume <json>: the JSON answer is recorded with the decision; null or bad JSON is bad usage', async () => {
    const paused = json(await cli('runs', 'start', 'human-review', '--session', `cli-${randomUUID()}`, '--wait', '--json'));
    const id = paused.approval.id as string;
    expect(await cli('approvals', 'reject', id, '--resume', 'null')).toMatchObject({ code: 2, stderr: expect.stringContaining('expected a JSON value other than null') });
    expect(await cli('approvals', 'approve', id, '--resume', '{bad')).toMatchObject({ code: 2, stderr: expect.stringContaining('not valid JSON') });
    expect(json(await cli('approvals', 'get', id, '--json'))).toMatchObject({ status: 'pending' });

    const answer = json(await cli('approvals', 'reject', id, '--resume', '{"why":["later",2]}', '--comment', 'not now', '--wait', '--json'));
    expect(answer).toMatchObject({ id, status: 'rejected', run: { status: 'completed', state: { outcome: 'discarded' } } });
    expect(json(await cli('approvals', 'get', id, '--json'))).toMatchObject({ status: 'rejected', comment: 'not now', resume: { why: ['later', 2] } });
    expect((await cli('approvals', 'get', id)).stdout).toMatch(/^resume\s+\{"why":\["later",2\]\}$/m);
  });

  it('exits 3 when a waited run is cancelled, 4 when --wait-ms passes first, 1 on an error answer, 2 on bad usage', async () => {
    const session = `cli-${randomUUID()}`;
    const slow = ['stream-words', '--session', session, '--input', JSON.stringify({ text: 'one two three four five six seven eight nine ten', delay_ms: 1000 })];
    const early = await cli('runs', 'start', ...slow, '--wait', '--wait-ms', '200', '--json');
    expect(early.code).toBe(4);
    expect(json(early.stdout).status).toMatch(/^(queued|running)$/);

    const waiting = spawnCli(['runs', 'start', ...slow, '--multitask', 'interrupt', '--wait'], { AGENTPLANE_URL: url });
    const running = await waitFor('the second run to be running', async () => {
      const runs = json(await cli('runs', 'list', '--session', session, '--json')).runs as Record<string, any>[];
      return runs.find((r) => r.id !== json(early.stdout).id && r.status === 'running');
    });
    const cancelled = await cli('runs', 'cancel', running.id);
    expect(cancelled).toMatchObject({ code: 0, stdout: `run ${running.id}  cancelled\n` });
    const waited = await waiting.exited;
    expect(waited.code).toBe(3);
    expect(waited.stdout).toContain(`run ${running.id}  cancelled`);

    const missing = await cli('runs', 'get', 'no-such-run');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^agentplane: 404 not_found: The run was not found\. \(request [\w-]+\)\n$/);
    expect(await cli('runs', 'cancel', running.id)).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 409 conflict: /) });
    const unknownAgent = await cli('runs', 'start', 'no-such-agent');
    expect(unknownAgent).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 400 unknown_agent: /) });

    const unreachable = await runCli(['sessions', 'list', '--url', `http://127.0.0.1:${await freePort()}`]);
    expect(unreachable).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/) });

    expect(await cli('runs', 'start')).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument 'agent'") });
    expect(await cli('runs', 'start', 'echo', '--input', '[1]')).toMatchObject({ code: 2, stderr: expect.stringContaining('expected a JSON object') });
    expect(await cli('runs', 'start', 'echo', '--wait-ms', '0')).toMatchObject({ code: 2, stderr: expect.stringContaining('from 1 to 300000') });
    expect(await cli('no-such-command')).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'no-such-command'") });
    expect(await cli('--help')).toMatchObject({ code: 0, stdout: expect.stringContaining('events') });
  });
});
