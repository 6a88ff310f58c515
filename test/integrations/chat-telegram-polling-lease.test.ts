import { describe, expect, it, onTestFinished } from 'vitest';
import { MemoryLeaseStore } from '../../src/adapters/memory/timer-store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { LeasedTelegramPolling } from '../../src/integrations/gateway/telegram-polling.js';
import { TelegramApi } from '../../src/integrations/telegram/telegram-api.js';
import type { TelegramUpdate } from '../../src/integrations/telegram/telegram-types.js';
import type { LeaseStore } from '../../src/ports/store.js';
import { captureLogger } from '../support/chat.js';
import { FakeTelegram } from '../support/fake-platforms/fake-telegram.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const BOT_TOKEN = '4242:leased-poller';
const redis = useRedis();

const leaseStores: Record<'memory' | 'redis', () => LeaseStore> = {
  memory: () => new MemoryLeaseStore(Date.now),
  redis: () => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('tg-lease') }).leases,
};

function text(words: string): Record<string, unknown> {
  return { message: { message_id: 1, chat: { id: 9, type: 'private' }, from: { id: 5, is_bot: false }, date: 1, text: words } };
}

/**
 * Two gateway replicas' pollers of one bot on one lease store (memory: two in one process;
 * Redis: as replicas share it), against a fake Telegram that holds long polls and counts any
 * getUpdates that overlaps another.
 */
describe.each(['memory', 'redis'] as const)('Telegram polling of the chat gateway, one poller at a time (%s)', (backend) => {
  it('the holder polls alone; an update is confirmed only once handled (a failure polls it again); once the holder stops, the other polls', async () => {
    const fake = await FakeTelegram.start(BOT_TOKEN);
    onTestFinished(() => fake.close());
    const leases = leaseStores[backend]();
    /** `<poller>:<update_id>` per handling, `!` marking a failed one; whether Telegram still kept the update while it was handled. */
    const handled: string[] = [];
    const keptWhileHandled: boolean[] = [];
    let failNext = true;
    const poller = (name: string) => {
      const { logger } = captureLogger();
      const api = new TelegramApi({ botToken: BOT_TOKEN, apiBaseUrl: fake.url, timeoutMs: 5_000, fetch });
      const handle = async (update: TelegramUpdate) => {
        keptWhileHandled.push(fake.unconfirmed.includes(update.update_id));
        if (failNext) {
          failNext = false;
          handled.push(`${name}:${update.update_id}!`);
          throw new Error('the backend is unreachable');
        }
        handled.push(`${name}:${update.update_id}`);
      };
      const polling = new LeasedTelegramPolling({ api, leases, botToken: BOT_TOKEN, logger, handle });
      onTestFinished(() => polling.stop());
      return polling;
    };

    const first = poller('first');
    first.start();
    await waitFor('the first poller to poll', () => fake.calls('getUpdates').length > 0);
    const second = poller('second');
    second.start();
    const one = fake.push(text('one'));
    await waitFor('the failed handling', () => handled.length === 1);
    expect(handled).toEqual([`first:${one}!`]);
    expect(fake.unconfirmed).toEqual([one]);
    await waitFor('the update polled again and handled', () => handled.length === 2);
    const two = fake.push(text('two'));
    await waitFor('the second update', () => handled.length === 3);
    expect(handled).toEqual([`first:${one}!`, `first:${one}`, `first:${two}`]);

    // Stopping ends the held poll at once (not waited out), confirms what was handled, lets the lease go.
    const abandoned = fake.abandonedPolls;
    await first.stop();
    await waitFor('the held poll abandoned', () => fake.abandonedPolls > abandoned);
    expect(fake.unconfirmed).toEqual([]);
    const three = fake.push(text('three'));
    // The second poller was trying all along: it takes over now, and only now handles anything.
    await waitFor('the second poller to handle it', () => handled.length === 4);
    expect(handled.at(-1)).toBe(`second:${three}`);
    await second.stop();
    expect(keptWhileHandled).toEqual([true, true, true, true]);
    expect(fake.overlappingPolls).toBe(0);
    expect(fake.calls('deleteWebhook')).toHaveLength(2);
  });
});
