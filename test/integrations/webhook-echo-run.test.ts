import { afterEach, describe, expect, it } from 'vitest';
import { loadWebhooksConfig } from '../../src/integrations/webhook/config.js';
import { configuredReceiver } from '../../src/integrations/webhook/configured-receiver.js';
import { silentLogger } from '../../src/integrations/shared/silent-logger.js';
import { call, startTestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { mount } from '../support/chat.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('webhook delivery → run', () => {
  it('a delivery routed to echo produces a completed run visible through GET /api/sessions', async () => {
    const api = await startTestApi();
    cleanup.push(() => api.close());
    const config = loadWebhooksConfig({ WEBHOOK_ROUTES: 'push=echo', WEBHOOK_SECRET: 'hook-secret' });
    const receiver = configuredReceiver(config, api.composition.runs, silentLogger());
    const server = await mount(receiver.middleware());
    cleanup.push(() => server.close(), () => receiver.close());

    const unrouted = await call(`${server.url}/webhook`, { method: 'POST', headers: { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'tag' }, json: {} });
    expect(unrouted.body).toEqual({ status: 'ok', handled: 0 });
    const delivery = await call(`${server.url}/webhook/github`, {
      method: 'POST',
      headers: { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'push', 'X-Event-Source': 'github' },
      json: { ref: 'refs/heads/main', commits: 2 },
    });
    expect(delivery).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });

    const sessions = await waitFor('the echo session', async () => {
      const listed = await call(`${api.url}/api/sessions`);
      return listed.body.sessions.length > 0 && listed.body.sessions;
    });
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ agent_id: 'echo', tenant_id: 'DefaultTenant' });
    const sessionId = sessions[0].id as string;
    const runs = await waitFor('the completed run', async () => {
      const listed = await call(`${api.url}/api/runs?session_id=${sessionId}`);
      return listed.body.runs[0]?.status === 'completed' && listed.body.runs;
    });
    expect(runs).toHaveLength(1);
    const state = await call(`${api.url}/api/sessions/state?session_id=${sessionId}`);
    expect(state.body).toMatchObject({
      node_id: '__end__',
      state: { echoed: true, webhook: { type: 'push', source: 'github', payload: { ref: 'refs/heads/main', commits: 2 } } },
    });
  });
});
