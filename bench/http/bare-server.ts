import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import Koa from 'koa';
import { RedisKeys } from '../../src/adapters/redis/keys.js';

/**
 * The framework's ceiling for `npm run bench:http`: a minimal Koa process that answers each
 * measured endpoint with the JSON bytes the real API answered it with (captured by the
 * benchmark into BARE_RESPONSES), draining a request body first as any POST handler must.
 * No routing library, validation, auth, logging, metrics.
 *
 * With REDIS_URL set it first does the Redis reads the API's store does for the two GET
 * endpoints (ZREVRANGE + 50 HGETALL in a pipeline; LINDEX of the latest checkpoint): the
 * ceiling of a Koa handler that has to read the same data.
 */
interface Captured {
  status: number;
  body: string;
}

const TENANT = 'DefaultTenant';
const responses = JSON.parse(readFileSync(process.env.BARE_RESPONSES!, 'utf8')) as Record<string, Captured>;
const bodies = new Map(Object.entries(responses).map(([key, r]) => [key, { status: r.status, body: Buffer.from(r.body, 'utf8') }]));
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
const keys = new RedisKeys(process.env.SERVICE_KEY_PREFIX ?? 'agentplane');

const reads: Record<string, (query: Record<string, unknown>) => Promise<unknown>> = {
  'GET /api/sessions': async () => {
    const ids = await redis!.zrevrange(keys.sessions(TENANT), 0, 49);
    const pipeline = redis!.pipeline();
    for (const id of ids) pipeline.hgetall(keys.session(TENANT, id));
    return pipeline.exec();
  },
  'GET /api/sessions/state': (query) => redis!.lindex(keys.checkpoints(TENANT, String(query.session_id)), -1),
};

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/health/ready') {
    ctx.body = { status: 'ready' };
    return;
  }
  const key = `${ctx.method} ${ctx.path}`;
  const answer = bodies.get(key);
  if (!answer) return;
  for await (const _chunk of ctx.req) void _chunk;
  if (redis) await reads[key]?.(ctx.query);
  ctx.status = answer.status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = answer.body;
});
createServer(app.callback()).listen(Number(process.env.SERVICE_PORT), process.env.SERVICE_HOST ?? '127.0.0.1');
