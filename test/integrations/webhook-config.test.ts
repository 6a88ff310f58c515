import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { loadWebhooksConfig } from '../../src/integrations/webhook/config.js';

describe('loadWebhooksConfig', () => {
  it('has the documented defaults (open only with WEBHOOK_INSECURE=true, and then on loopback)', () => {
    expect(loadWebhooksConfig({ WEBHOOK_SECRET: 'shared' }).host).toBe('0.0.0.0');
    expect(loadWebhooksConfig({ WEBHOOK_INSECURE: 'true', WEBHOOK_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    const config = loadWebhooksConfig({ WEBHOOK_INSECURE: 'true' });
    expect(config).toMatchObject({
      insecure: true,
      host: '127.0.0.1',
      port: 8422,
      secret: '',
      signatureScheme: 'none',
      signature: undefined,
      tenant: 'DefaultTenant',
      routes: [],
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads routes, the secret and a signature scheme, treating empty variables as unset', () => {
    const config = loadWebhooksConfig({
      WEBHOOK_PORT: '',
      WEBHOOK_SECRET: 'shared',
      WEBHOOK_SIGNATURE: 'github',
      WEBHOOK_SIGNING_SECRET: 'gh',
      WEBHOOK_ROUTES: ' push=echo, *=human-review ,',
    });
    expect(config.port).toBe(8422);
    expect(config.secret).toBe('shared');
    expect(config.routes).toEqual([
      { type: 'push', agentId: 'echo' },
      { type: '*', agentId: 'human-review' },
    ]);
    const body = Buffer.from('{}');
    const header = `sha256=${createHmac('sha256', 'gh').update(body).digest('hex')}`;
    expect(config.signature?.(body, { 'x-hub-signature-256': header })).toEqual({ ok: true });
    expect(config.signature?.(body, { 'x-hub-signature-256': header, 'x-github-delivery': 'd-1' })).toEqual({
      ok: true,
      delivery: { id: 'github:d-1', replayWindowMs: 24 * 3600 * 1000 },
    });
  });

  it('refuses to open a receiver to anyone: neither a secret nor a signature scheme needs WEBHOOK_INSECURE=true', () => {
    for (const env of [{}, { WEBHOOK_INSECURE: 'false' }, { WEBHOOK_SECRET: '' }]) {
      expect(() => loadWebhooksConfig(env)).toThrow(/WEBHOOK_SECRET: .*WEBHOOK_INSECURE=true/);
    }
    expect(loadWebhooksConfig({ WEBHOOK_SECRET: 'shared' }).insecure).toBe(false);
    expect(loadWebhooksConfig({ WEBHOOK_SIGNATURE: 'github', WEBHOOK_SIGNING_SECRET: 'gh' }).secret).toBe('');
  });

  it.each([
    [{ WEBHOOK_PORT: '70000' }, 'WEBHOOK_PORT'],
    [{ WEBHOOK_INSECURE: 'yes' }, 'WEBHOOK_INSECURE'],
    [{ WEBHOOK_SIGNATURE: 'hmac' }, 'WEBHOOK_SIGNATURE'],
    [{ WEBHOOK_SIGNATURE: 'standard-webhooks' }, 'WEBHOOK_SIGNING_SECRET'],
    [{ WEBHOOK_SIGNATURE: 'standard-webhooks', WEBHOOK_SIGNING_SECRET: 'whsec_???' }, 'WEBHOOK_SIGNING_SECRET'],
    [{ WEBHOOK_ROUTES: 'push' }, 'WEBHOOK_ROUTES'],
    [{ WEBHOOK_ROUTES: 'push=bad agent' }, 'WEBHOOK_ROUTES'],
    [{ WEBHOOK_TENANT: 'no spaces allowed' }, 'WEBHOOK_TENANT'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadWebhooksConfig(env)).toThrow(ConfigError);
    expect(() => loadWebhooksConfig(env)).toThrow(variable);
  });
});
