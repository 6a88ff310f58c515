import { afterEach, describe, expect, it } from 'vitest';
import { TelegramAdapter, type TelegramText } from '../../src/integrations/telegram/telegram-adapter.js';
import { FakeTelegram, telegramError } from '../support/fake-platforms/fake-telegram.js';
import { waitFor } from '../support/wait.js';
import { captureLogger } from '../support/chat.js';
import { trackTimers } from '../support/timers.js';

const BOT_TOKEN = '123456:telegram-bot-token';
/**
 * A long poll the fake holds, and a backoff, that a stop must cut short: a stop that waited for
 * either resolves only after its timer ran out (well within the test's own timeout).
 */
const HELD_POLL_SEC = 20;
const BACKOFF_MS = 20_000;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function textUpdate(text: string, chatId = 42): Record<string, unknown> {
  return { message: { message_id: 1, chat: { id: chatId, type: 'private' }, from: { id: 7, is_bot: false, first_name: 'Ada' }, date: 1, text } };
}

interface Setup {
  fake: FakeTelegram;
  newAdapter(overrides?: { pollTimeoutSec?: number; retryInitialMs?: number }): TelegramAdapter;
  received: string[];
  logs: Record<string, unknown>[];
}

async function setup(): Promise<Setup> {
  const fake = await FakeTelegram.start(BOT_TOKEN);
  cleanup.push(() => fake.close());
  const { logger, records } = captureLogger();
  const received: string[] = [];
  const newAdapter: Setup['newAdapter'] = (overrides = {}) => {
    const adapter = new TelegramAdapter({
      botToken: BOT_TOKEN,
      apiBaseUrl: fake.url,
      pollTimeoutSec: 1,
      retryInitialMs: 10,
      retryMaxMs: 50,
      logger,
      handler: (input: TelegramText) => {
        received.push(input.text);
        return '';
      },
      ...overrides,
    });
    cleanup.push(() => adapter.stop());
    return adapter;
  };
  return { fake, newAdapter, received, logs: records };
}

describe('Telegram long polling', () => {
  it('delivers each update once, in order, across stop() and start(), and a new process gets only new ones', async () => {
    const { fake, newAdapter, received } = await setup();
    const adapter = newAdapter();
    fake.push(textUpdate('one'));
    fake.push(textUpdate('two'));
    adapter.start();
    await waitFor('two updates', () => received.length === 2);
    fake.push(textUpdate('three'));
    await waitFor('three updates', () => received.length === 3);
    await adapter.stop();
    expect(fake.unconfirmed).toEqual([]);

    fake.push(textUpdate('four'));
    fake.push(textUpdate('five'));
    adapter.start();
    await waitFor('five updates', () => received.length === 5);
    await adapter.stop();

    const restarted = newAdapter();
    fake.push(textUpdate('six'));
    restarted.start();
    await waitFor('six updates', () => received.length === 6);
    await restarted.stop();
    expect(received).toEqual(['one', 'two', 'three', 'four', 'five', 'six']);
  });

  it('asks getUpdates with the stored offset, the long-poll timeout and the update kinds it handles', async () => {
    const { fake, newAdapter, received } = await setup();
    const adapter = newAdapter({ pollTimeoutSec: 7 });
    const first = fake.push(textUpdate('hello'));
    adapter.start();
    await waitFor('the update', () => received.length === 1);
    await waitFor('the next poll', () => fake.calls('getUpdates').length >= 2);
    const [initial, next] = fake.calls('getUpdates');
    expect(initial!.body).toEqual({ offset: 0, timeout: 7, allowed_updates: ['message', 'callback_query'] });
    expect(next!.body).toMatchObject({ offset: first + 1, timeout: 7 });
  });

  it('survives a network error and backs off', async () => {
    const { fake, newAdapter, received, logs } = await setup();
    fake.server.queue((call) => call.path.endsWith('/getUpdates'), { destroy: true });
    fake.push(textUpdate('after the outage'));
    newAdapter().start();
    await waitFor('the update', () => received.length === 1);
    expect(logs.some((log) => log.level === 40 && log.msg === 'Telegram getUpdates failed; backing off')).toBe(true);
    expect(fake.calls('getUpdates').length).toBeGreaterThanOrEqual(2);
  });

  it("waits a 429's retry_after rather than its own backoff", async () => {
    const { fake, newAdapter, received, logs } = await setup();
    fake.server.queue(
      (call) => call.path.endsWith('/getUpdates'),
      telegramError(429, 'Too Many Requests: retry after 1', { retry_after: 1 }),
    );
    fake.push(textUpdate('after the limit'));
    newAdapter().start();
    await waitFor('the update', () => received.length === 1);
    const warning = logs.find((log) => log.level === 40);
    expect(warning).toMatchObject({ waitMs: 1000, err: { platformCode: 429 } });
  });

  it('reports a 409 conflict clearly and keeps polling', async () => {
    const { fake, newAdapter, received, logs } = await setup();
    fake.server.queue(
      (call) => call.path.endsWith('/getUpdates'),
      telegramError(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'),
    );
    fake.push(textUpdate('after the conflict'));
    newAdapter().start();
    await waitFor('the update', () => received.length === 1);
    const error = logs.find((log) => log.level === 50);
    expect(error?.msg).toMatch(/409.*another process is polling with this bot token, or a webhook is set/);
    expect(error?.err).toMatchObject({ status: 409, platformCode: 409, message: expect.stringContaining('terminated by other getUpdates request') });
    expect(JSON.stringify(logs)).not.toContain(BOT_TOKEN);
  });

  it('stop() aborts a held long poll at once and leaves no timer', async () => {
    const { fake, newAdapter } = await setup();
    const timers = trackTimers();
    const adapter = newAdapter({ pollTimeoutSec: HELD_POLL_SEC });
    adapter.start();
    await waitFor('a held getUpdates', () => fake.calls('getUpdates').length === 1);
    // The fake holds the poll until its timeout ran out: a stop that waited for the poll resolves after.
    const heldRanOutAtStop = await adapter.stop().then(() => timers.fired(HELD_POLL_SEC * 1000));
    expect(heldRanOutAtStop, 'stop() waited for the long poll').toBe(0);
    await waitFor('the timers to be cleared', () => timers.pending() === 0);
    timers.stop();
    expect(fake.calls('getUpdates')).toHaveLength(1);
  });

  it('stop() interrupts a backoff wait and leaves no timer', async () => {
    const { fake, newAdapter, logs } = await setup();
    const timers = trackTimers();
    fake.server.queue((call) => call.path.endsWith('/getUpdates'), { destroy: true });
    const adapter = newAdapter({ retryInitialMs: BACKOFF_MS });
    adapter.start();
    await waitFor('the backoff', () => logs.some((log) => log.waitMs === BACKOFF_MS));
    const backoffRanOutAtStop = await adapter.stop().then(() => timers.fired(BACKOFF_MS));
    expect(backoffRanOutAtStop, 'stop() waited for the backoff').toBe(0);
    await waitFor('the timers to be cleared', () => timers.pending() === 0);
    timers.stop();
    expect(fake.calls('getUpdates')).toHaveLength(1);
  });
});
