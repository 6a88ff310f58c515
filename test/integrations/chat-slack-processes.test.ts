import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { bodiesOf, slackHeaders, startFakeSlackApi } from '../support/fake-platforms/fake-chat.js';
import type { RecordingServer } from '../support/fake-platforms/recording-server.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'xoxb-processes';
const SECRET = 'slack-processes-secret';
const redis = useRedis();

/** POSTs a signed Slack Events API envelope to a replica. */
function sendEvent(url: string, event: Record<string, unknown>, eventId: string) {
  const body = JSON.stringify({ type: 'event_callback', event_id: eventId, event });
  return call(`${url}/slack/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, body) } });
}

/** POSTs a signed press of Approve on the approval message `ts` in `channel`. */
function approve(url: string, approvalId: string, user: string, channel: string, ts: string) {
  const payload = { type: 'block_actions', user: { id: user }, actions: [{ action_id: 'approve', block_id: 'agentplane_approval', value: approvalId }], container: { channel_id: channel, message_ts: ts } };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return call(`${url}/slack/interactions`, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...slackHeaders(SECRET, body) } });
}

/**
 * The Slack gateway as deployed on Redis: two API processes serving /slack/* and a worker
 * process, all on one key prefix, against a fake Slack Web API (a real local HTTP server).
 */
describe('Slack chat gateway across two API processes and a worker process', () => {
  let fake: RecordingServer;
  let replicas: AgentProcess[];
  let worker: AgentProcess;

  beforeAll(async () => {
    fake = await startFakeSlackApi(TOKEN);
    const env = {
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: uniquePrefix('chat-processes'),
      AGENTS_MODULE: 'test/fixtures/chat-agents.ts',
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      LOG_LEVEL: 'info',
    };
    const slack = { SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${fake.url}/api`, SLACK_AGENT: 'chat-agent', SLACK_APPROVERS: 'U0123:user,U0456:admin' };
    [worker, ...replicas] = await Promise.all([
      startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env }),
      startProcess({ entry: 'src/main/api.ts', env: { ...env, ...slack, SERVICE_REPLICA_ID: 'replica-a' } }),
      startProcess({ entry: 'src/main/api.ts', env: { ...env, ...slack, SERVICE_REPLICA_ID: 'replica-b' } }),
    ]);
  });
  afterAll(async () => {
    const codes = await Promise.all([worker, ...(replicas ?? [])].map((p) => p?.stop()));
    await fake?.close();
    expect(codes).toEqual(codes.map(() => 0));
  });

  /** The approval message posted in the thread `thread`, its `ts`, and the replica that posted it (its log says so). */
  async function approvalIn(thread: string) {
    const posted = await waitFor('the approval message', () => fake.calls.find((entry) => entry.path.endsWith('chat.postMessage') && (entry.body as any).thread_ts === thread && (entry.body as any).blocks));
    const approvalId = (posted.body as any).blocks.at(-1).elements[0].value as string;
    const isPostLine = (line: { json?: Record<string, unknown> }) => line.json?.msg === 'chat approval posted' && line.json.approval_id === approvalId;
    const poster = await waitFor('the posting replica’s log line', () => replicas.find((replica) => replica.lines.some(isPostLine)));
    const ts = (await waitFor('the posted ts', () => poster.lines.find(isPostLine)?.json?.message)) as string;
    return { approvalId, ts, poster, other: replicas.find((replica) => replica !== poster)! };
  }

  it('a two-turn conversation in a thread, each turn at another replica, answered in the thread', async () => {
    const [a, b] = replicas as [AgentProcess, AgentProcess];
    expect((await sendEvent(a.url, { type: 'app_mention', channel: 'C1', user: 'U0123', text: '<@UBOT> hello', ts: '100.000001' }, 'Ev1')).status).toBe(200);
    await waitFor('the first answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'turn 1: hello'));
    const reply = { type: 'message', channel_type: 'channel', channel: 'C1', user: 'U0456', text: 'again', ts: '100.000003', thread_ts: '100.000001' };
    expect((await sendEvent(b.url, reply, 'Ev2')).status).toBe(200);
    await waitFor('the second answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'turn 2: again'));
    expect(bodiesOf(fake, 'chat.postMessage').filter((body) => body.channel === 'C1').map((body) => [body.thread_ts, body.text])).toEqual([
      ['100.000001', 'turn 1: hello'],
      ['100.000001', 'turn 2: again'],
    ]);
  });

  it('an approval pressed on the replica that did not post it: decided by the Slack user, the message edited once', async () => {
    expect((await sendEvent(replicas[0]!.url, { type: 'app_mention', channel: 'C2', user: 'U0123', text: '<@UBOT> deploy v2', ts: '200.000001' }, 'Ev3')).status).toBe(200);
    const { approvalId, ts, other } = await approvalIn('200.000001');
    expect((await approve(other.url, approvalId, 'U0456', 'C2', ts)).status).toBe(200);
    expect((await call(`${other.url}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'slack:U0456' });
    await waitFor('the run’s answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'deployed'));
    const edits = bodiesOf(fake, 'chat.update').filter((body) => body.ts === ts);
    expect(edits).toHaveLength(1);
    expect(edits[0]).toMatchObject({ channel: 'C2', text: 'Approved by <@U0456>: Deploy deploy v2?' });
  });

  it('the replica that posted an approval stopped, the approval decided through the API on the other: the message is edited', async () => {
    expect((await sendEvent(replicas[1]!.url, { type: 'app_mention', channel: 'C3', user: 'U0123', text: '<@UBOT> deploy v3', ts: '300.000001' }, 'Ev4')).status).toBe(200);
    const { approvalId, ts, poster, other } = await approvalIn('300.000001');
    expect(await poster.stop()).toBe(0);
    expect((await call(`${other.url}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: false } })).status).toBe(200);
    const edit = await waitFor('the edited message', () => bodiesOf(fake, 'chat.update').find((body) => body.ts === ts));
    expect(edit.text).toMatch(/^Rejected by .+: Deploy deploy v3\?$/);
    await waitFor('the run’s answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'not deployed'));
  });
});
