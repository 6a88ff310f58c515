import { Redis } from 'ioredis';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { sleep } from '../harness/client.js';

/**
 * The publishing process of `npm run bench:sse`: publishes `EVENTS` events through the
 * EventBus, one every `INTERVAL_MS`, each carrying its send time (wall-clock ms, fractional)
 * in `run_id` so the receivers can compute publish → receive latency. Prints one JSON line.
 */
const { REDIS_URL, SERVICE_KEY_PREFIX, EVENTS, INTERVAL_MS } = process.env;
if (!REDIS_URL || !SERVICE_KEY_PREFIX) throw new Error('publisher: REDIS_URL and SERVICE_KEY_PREFIX are required');

const now = () => performance.timeOrigin + performance.now();
const redis = new Redis(REDIS_URL);
// Only publishes: the subscriber connection is never opened.
const unused = new Redis(REDIS_URL, { lazyConnect: true });
const bus = new RedisEventBus({ redis, subscriber: unused, keyPrefix: SERVICE_KEY_PREFIX, retain: 10_000 });
await redis.ping();

const events = Number(EVENTS ?? 100);
const intervalMs = Number(INTERVAL_MS ?? 20);
const started = now();
for (let i = 0; i < events; i += 1) {
  const due = started + i * intervalMs;
  if (due > now()) await sleep(due - now());
  const sentAt = now();
  await bus.publish(DEFAULT_TENANT, {
    type: 'node_start',
    session: 'bench',
    run_id: sentAt.toFixed(3),
    agent_id: 'bench',
    ts: new Date(sentAt).toISOString(),
    node: `n${i}`,
  });
}
console.log(JSON.stringify({ published: events, seconds: (now() - started) / 1000 }));
await bus.close();
redis.disconnect();
unused.disconnect();
