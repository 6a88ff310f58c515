import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { queueFull } from '../../src/domain/fair-share.js';
import type { ListeningServer } from '../../src/http/listen.js';
import { runBridge } from '../../src/integrations/webhook/run-bridge.js';
import { WebhookReceiver } from '../../src/integrations/webhook/webhook-receiver.js';
import type { RunControl, StartRunRequest } from '../../src/ports/run-control.js';
import { mount } from '../support/chat.js';

// The bridge's own logic against a scripted RunControl; the delivery that produces a real
// completed run is webhook-echo-run.test.ts.

const servers: ListeningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function scriptedRunControl(): RunControl & { started: [string, StartRunRequest][] } {
  const started: [string, StartRunRequest][] = [];
  return {
    started,
    startRun: async (tenant, request) => {
      if (request.agent_id === 'missing') throw new AppError('unknown_agent', 'Agent missing is not registered.');
      if (request.agent_id === 'full') throw queueFull(2, 2);
      started.push([tenant, request]);
      return { run_id: `run-${started.length}`, session_id: `sess-${started.length}`, status: 'queued' };
    },
    resumeSession: () => Promise.reject(new Error('not used')),
    cancelRun: () => Promise.reject(new Error('not used')),
    queueDepth: () => Promise.reject(new Error('not used')),
    answerApproval: () => Promise.reject(new Error('not used')),
  };
}

describe('webhook run bridge', () => {
  it('starts a run of the routed agent with the delivery as input', async () => {
    const runControl = scriptedRunControl();
    const receiver = new WebhookReceiver().on('push', runBridge({ runControl, tenant: 'acme', agentId: 'echo' }));
    const server = await mount(receiver.middleware());
    servers.push(server);
    const response = await fetch(`${server.url}/webhook`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Event-Type': 'push', 'X-Event-Source': 'ci' },
      body: '{"ref":"main"}',
    });
    expect(await response.json()).toEqual({ status: 'ok', handled: 1 });
    expect(runControl.started).toEqual([['acme', { agent_id: 'echo', input: { webhook: { type: 'push', source: 'ci', payload: { ref: 'main' } } } }]]);
  });

  it('fails the delivery with the refusal when the run cannot start', async () => {
    const receiver = new WebhookReceiver().on('*', runBridge({ runControl: scriptedRunControl(), tenant: 'acme', agentId: 'missing' }));
    const server = await mount(receiver.middleware());
    servers.push(server);
    const response = await fetch(`${server.url}/webhook`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ status: 'error', errors: ['unknown_agent'] });
  });

  it('answers 429 with Retry-After and the error body when the tenant’s queue is full, as the API does', async () => {
    const receiver = new WebhookReceiver().on('*', runBridge({ runControl: scriptedRunControl(), tenant: 'acme', agentId: 'full' }));
    const server = await mount(receiver.middleware());
    servers.push(server);
    const response = await fetch(`${server.url}/webhook`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({ error: { code: 'rate_limited', message: queueFull(2, 2).message } });
  });
});
