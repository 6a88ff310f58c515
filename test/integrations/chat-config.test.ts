import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { loadChatConfig } from '../../src/integrations/gateway/config.js';
import { startConfiguredGateway } from '../../src/main/chat-gateway.js';
import { startTestApi } from '../support/app.js';

const SLACK = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's3cret' };
const PUBLIC_KEY = 'ab'.repeat(32);

/** The one line a process prints before it exits, or undefined when the settings load. */
function refusal(env: Record<string, string>): string | undefined {
  try {
    loadChatConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

describe('chat gateway settings', () => {
  it('no platform set: nothing on; each platform is on with its token and its inbound secret', () => {
    expect(loadChatConfig({})).toEqual({});
    const config = loadChatConfig({
      ...SLACK,
      SLACK_AGENT: 'echo',
      SLACK_APPROVALS_CHANNEL: 'C1',
      SLACK_APPROVERS: 'U0123:user, U0456:admin',
      DISCORD_BOT_TOKEN: 'd',
      DISCORD_PUBLIC_KEY: PUBLIC_KEY,
      TELEGRAM_BOT_TOKEN: '1:t',
      TELEGRAM_SECRET_TOKEN: 'tok_1',
      TELEGRAM_APPROVALS_CHAT: '-100123',
      TELEGRAM_APPROVERS: '501:user',
      TELEGRAM_TENANT: 'acme',
    });
    expect(config.slack).toMatchObject({ apiUrl: 'https://slack.com/api', agent: 'echo', approvalsTarget: 'C1', tenant: 'DefaultTenant', signingSecret: 's3cret' });
    expect([...config.slack!.approvers]).toEqual([['U0123', 'user'], ['U0456', 'admin']]);
    expect(config.discord).toMatchObject({ apiUrl: 'https://discord.com/api/v10', publicKey: PUBLIC_KEY, agent: undefined });
    expect(config.telegram).toMatchObject({ approvalsTarget: '-100123', tenant: 'acme', mode: 'webhook', secretToken: 'tok_1' });
  });

  it('Telegram polls with TELEGRAM_MODE=polling: no secret token then, and one set is refused', () => {
    expect(loadChatConfig({ TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_MODE: 'polling', TELEGRAM_AGENT: 'echo' }).telegram).toMatchObject({ mode: 'polling', agent: 'echo' });
    expect(loadChatConfig({ TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_MODE: 'polling' }).telegram).not.toHaveProperty('secretToken');
    expect(loadChatConfig({ TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_MODE: 'webhook', TELEGRAM_SECRET_TOKEN: 'tok' }).telegram).toMatchObject({ mode: 'webhook', secretToken: 'tok' });
    expect(refusal({ TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_MODE: 'polling', TELEGRAM_SECRET_TOKEN: 'tok' })).toMatch(/^Invalid configuration: TELEGRAM_SECRET_TOKEN: TELEGRAM_MODE is polling/);
    expect(refusal({ TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_MODE: 'push' })).toMatch(/^Invalid configuration: TELEGRAM_MODE: expected webhook or polling/);
    expect(refusal({ TELEGRAM_MODE: 'polling' })).toMatch(/^Invalid configuration: TELEGRAM_BOT_TOKEN: TELEGRAM_MODE is set/);
  });

  it('a partial or bad configuration is one line naming the setting', () => {
    expect(refusal({ SLACK_BOT_TOKEN: 'x' })).toMatch(/^Invalid configuration: SLACK_SIGNING_SECRET: /);
    expect(refusal({ SLACK_SIGNING_SECRET: 'x' })).toMatch(/^Invalid configuration: SLACK_BOT_TOKEN: SLACK_SIGNING_SECRET is set/);
    expect(refusal({ ...SLACK, SLACK_APPROVERS: 'U0123' })).toMatch(/^Invalid configuration: SLACK_APPROVERS: expected <user id>:<role>/);
    expect(refusal({ ...SLACK, SLACK_APPROVERS: 'U0123:viewer' })).toMatch(/^Invalid configuration: SLACK_APPROVERS: .*viewer may not decide/);
    expect(refusal({ ...SLACK, SLACK_APPROVALS_CHANNEL: 'C1' })).toMatch(/^Invalid configuration: SLACK_APPROVERS: /);
    expect(refusal({ ...SLACK, SLACK_API_URL: 'slack.com' })).toMatch(/^Invalid configuration: SLACK_API_URL: /);
    expect(refusal({ ...SLACK, SLACK_TENANT: 'a b' })).toMatch(/^Invalid configuration: SLACK_TENANT: /);
    expect(refusal({ DISCORD_BOT_TOKEN: 'd', DISCORD_PUBLIC_KEY: 'xyz' })).toMatch(/^Invalid configuration: DISCORD_PUBLIC_KEY: /);
    expect(refusal({ DISCORD_BOT_TOKEN: 'd', DISCORD_PUBLIC_KEY: PUBLIC_KEY, DISCORD_APPROVERS: 'alice:user' })).toMatch(/^Invalid configuration: DISCORD_APPROVERS: /);
    expect(refusal({ TELEGRAM_BOT_TOKEN: 't' })).toMatch(/^Invalid configuration: TELEGRAM_SECRET_TOKEN: /);
    expect(refusal({ TELEGRAM_BOT_TOKEN: 't', TELEGRAM_SECRET_TOKEN: 'a b' })).toMatch(/^Invalid configuration: TELEGRAM_SECRET_TOKEN: /);
    expect(refusal({ TELEGRAM_BOT_TOKEN: 't', TELEGRAM_SECRET_TOKEN: 'ok', TELEGRAM_APPROVALS_CHAT: 'chat', TELEGRAM_APPROVERS: '1:user' })).toMatch(
      /^Invalid configuration: TELEGRAM_APPROVALS_CHAT: /,
    );
    for (const message of [refusal({ SLACK_BOT_TOKEN: 'x' }), refusal({ TELEGRAM_BOT_TOKEN: 't' })]) expect(message).not.toContain('\n');
  });

  it('an agent that is not registered stops the start, naming the setting', async () => {
    const api = await startTestApi();
    try {
      await expect(startConfiguredGateway(api.composition, loadChatConfig({ ...SLACK, SLACK_AGENT: 'nobody' }))).rejects.toThrow(
        /^Invalid configuration: SLACK_AGENT: "nobody" is no registered agent or graph$/,
      );
    } finally {
      await api.close();
    }
  });
});
