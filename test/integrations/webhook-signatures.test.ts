import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { ListeningServer } from '../../src/http/listen.js';
import { githubSignature } from '../../src/integrations/webhook/github-signature.js';
import type { SignatureVerifier } from '../../src/integrations/shared/signature-verifier.js';
import { standardWebhooksSignature } from '../../src/integrations/webhook/standard-webhooks-signature.js';
import { WebhookReceiver } from '../../src/integrations/webhook/webhook-receiver.js';
import { mount } from '../support/chat.js';

const servers: ListeningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A receiver checking `signature`, mounted on a Koa app; `calls` counts handler runs. */
async function mountSigned(signature: SignatureVerifier): Promise<{ url: string; calls: { count: number } }> {
  const calls = { count: 0 };
  const server = await mount(new WebhookReceiver({ signature }).on('*', () => void calls.count++).middleware());
  servers.push(server);
  return { url: `${server.url}/webhook`, calls };
}

function post(url: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** Standard Webhooks signing done by hand with node:crypto, independent of both implementations. */
function signStandard(secretBytes: Buffer, id: string, timestampSec: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', secretBytes).update(`${id}.${timestampSec}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSec), 'webhook-signature': `v1,${signature}` };
}

describe('Standard Webhooks signatures', () => {
  const secretBytes = randomBytes(32);
  const secret = `whsec_${secretBytes.toString('base64')}`;
  const body = '{"type":"invoice.paid","amount":4200}';
  const nowSec = (): number => Math.floor(Date.now() / 1000);

  it('vectors made with node:crypto are accepted by the reference implementation, and its signatures by ours', async () => {
    const headers = signStandard(secretBytes, 'msg_1', nowSec(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));

    const { url, calls } = await mountSigned(standardWebhooksSignature(secret));
    expect((await post(url, body, headers)).status).toBe(200);
    const reference = new Webhook(secret).sign('msg_2', new Date(), body);
    const referenceHeaders = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(nowSec()), 'webhook-signature': reference };
    expect((await post(url, body, referenceHeaders)).status).toBe(200);
    expect(calls.count).toBe(2);
  });

  it('accepts a delivery when any of several space-separated signatures matches (key rotation)', async () => {
    const { url, calls } = await mountSigned(standardWebhooksSignature(secret));
    const headers = signStandard(secretBytes, 'msg_3', nowSec(), body);
    headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}`;
    expect((await post(url, body, headers)).status).toBe(200);
    expect(calls.count).toBe(1);
  });

  it('rejects a wrong key, a tampered body, a stale or future timestamp and a missing header with 401, calling no handler', async () => {
    const { url, calls } = await mountSigned(standardWebhooksSignature(secret));
    const otherKey = randomBytes(32);
    const good = signStandard(secretBytes, 'msg_4', nowSec(), body);
    const cases: [string, string, Record<string, string>][] = [
      ['wrong key', body, signStandard(otherKey, 'msg_4', nowSec(), body)],
      ['tampered body', body.replace('4200', '4201'), good],
      ['stale timestamp', body, signStandard(secretBytes, 'msg_4', nowSec() - 600, body)],
      ['future timestamp', body, signStandard(secretBytes, 'msg_4', nowSec() + 600, body)],
      ['missing signature', body, { 'webhook-id': 'msg_4', 'webhook-timestamp': good['webhook-timestamp']! }],
      ['missing id', body, { 'webhook-timestamp': good['webhook-timestamp']!, 'webhook-signature': good['webhook-signature']! }],
      ['other id', body, { ...good, 'webhook-id': 'msg_5' }],
    ];
    for (const [name, sentBody, headers] of cases) {
      const response = await post(url, sentBody, headers);
      expect(response.status, name).toBe(401);
      expect(await response.json(), name).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      expect(() => new Webhook(secret).verify(sentBody, headers), `reference rejects ${name}`).toThrow();
    }
    expect(calls.count).toBe(0);
  });

  it('accepts timestamps up to 300 s old or 30 s ahead (clock skew), and refuses beyond either', () => {
    const nowMs = 1_800_000_000_000;
    const verify = standardWebhooksSignature(secret, { now: () => nowMs });
    for (const [offsetSec, ok] of [[-300, true], [30, true], [0, true], [-301, false], [31, false], [300, false]] as const) {
      const headers = signStandard(secretBytes, 'msg_6', nowMs / 1000 + offsetSec, body);
      expect(verify(Buffer.from(body), headers).ok, `${offsetSec} s`).toBe(ok);
    }
  });

  it('refuses a secret that is not base64 at construction', () => {
    expect(() => standardWebhooksSignature('whsec_not base64!')).toThrow(TypeError);
  });
});

describe('GitHub signatures', () => {
  it('matches the example vector of GitHub documentation', () => {
    const verify = githubSignature("It's a Secret to Everybody");
    const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
    expect(verify(Buffer.from('Hello, World!'), headers)).toEqual({ ok: true });
  });

  it('accepts a valid X-Hub-Signature-256 and rejects a wrong key, a tampered body and a missing header with 401', async () => {
    const secret = 'gh-secret';
    const { url, calls } = await mountSigned(githubSignature(secret));
    const body = '{"ref":"refs/heads/main"}';
    const sign = (key: string, payload: string): Record<string, string> => ({
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', key).update(payload).digest('hex')}`,
    });
    for (const [name, sentBody, headers] of [
      ['wrong key', body, sign('other', body)],
      ['tampered body', `${body} `, sign(secret, body)],
      ['missing header', body, {}],
    ] as const) {
      expect((await post(url, sentBody, headers)).status, name).toBe(401);
    }
    expect(calls.count).toBe(0);
    expect((await post(url, body, sign(secret, body))).status).toBe(200);
    expect(calls.count).toBe(1);
  });
});
