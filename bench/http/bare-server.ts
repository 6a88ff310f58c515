import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import Koa from 'koa';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { loadScripts } from '../../src/adapters/redis/scripts.js';

/**
 * The framework's ceiling for `npm run bench:http`: a minimal Koa process that answers each
 * measured endpoint with the JSON bytes the real API answered it with (captured by the
 * benchmark into BARE_RESPONSES), draining a request body first as any POST handler must.
 * No routing library, validation, auth, logging, metrics.
 *
 * With REDIS_URL set it first does the Redis reads the API's store does for the two GET
 * endpoints (the listSessions Lua script, ZREVRANGE + 50 HMGET in one call; LINDEX of the
 * latest checkpoint): the ceiling of a Koa handler that has to read the same data.
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
const script = redis ? loadScripts(redis) : undefined;

const reads: Record<string, (query: Record<string, unknown>) => Promise<unknown>> = {
  'GET /api/sessions': () => script!('listSessions', [keys.sessions(TENANT)], [keys.session(TENANT, ''), 0, 49, TENANT]),
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
