import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { PassThrough, pipeline, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { builtInAgents } from '../../src/agents/index.js';
import { loadConfig } from '../../src/config.js';
import { anonymous } from '../../src/http/middleware/authenticate.js';
import { createApiServer } from '../../src/main/api-server.js';
import { compose } from '../../src/main/compose.js';
import { createLogger } from '../../src/main/logger.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { sleep } from '../harness/client.js';

/**
 * The memory floor of an idle SSE connection, run by `npm run bench:sse` in a child process
 * with `--expose-gc`: live heap (after full collections) and RSS per connection for the same
 * idle clients held by
 *  - `pipe`: a bare node:http server piping a PassThrough into the response with `pipe`;
 *  - `node`: the same with stream.pipeline (an AbortController and end-of-stream listeners
 *    per response), which is what Koa does with a stream body;
 *  - `koa`: a Koa app whose one middleware sets a PassThrough body;
 *  - `agentplane`: the API app (memory backend) and GET /api/events/stream.
 * Usage: `node --expose-gc --import tsx bench/sse/floor.ts <variant> <clients>`; prints one JSON line.
 */
type Variant = 'pipe' | 'node' | 'koa' | 'agentplane';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const variant = process.argv[2] as Variant;
const clients = Number(process.argv[3] ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('floor.ts needs node --expose-gc');

function sse(): PassThrough {
  const body = new PassThrough();
  body.write('retry: 3000\n\n');
  return body;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

async function start(): Promise<number> {
  if (variant === 'pipe' || variant === 'node') {
    return listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        if (variant === 'pipe') sse().pipe(res);
        else pipeline(sse(), res, () => {});
      }),
    );
  }
  if (variant === 'koa') {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx) => {
      ctx.set('Content-Type', 'text/event-stream');
      ctx.body = sse();
    });
    return listen(createServer(app.callback()));
  }
  const config = loadConfig({ SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', SERVICE_RATE_LIMIT: 'off', SERVICE_SSE_MAX_PER_PRINCIPAL: '0', SERVICE_SSE_MAX_PER_TENANT: '0', LOG_LEVEL: 'warn' });
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const composition = compose(config, { logger: createLogger('warn', quiet), agents: new AgentRegistry(builtInAgents) });
  const api = createApiServer(composition, { authenticate: anonymous });
  return Number(new URL(await api.listen()).port);
}

async function hold(port: number, count: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sse/hold-clients.ts', String(port), String(count)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`hold-clients exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line === 'open' && resolve());
  });
  return child;
}

const settle = () => sleep(1000);
const usage = () => {
  gc();
  gc();
  return process.memoryUsage();
};

const port = await start();
(await hold(port, 50)).kill();
await settle();
const before = usage();
const held = await hold(port, clients);
await settle();
const after = usage();
held.kill();
const perConnectionKiB = (bytes: number) => Number((bytes / clients / 1024).toFixed(1));
console.log(JSON.stringify({ variant, clients, heapKiB: perConnectionKiB(after.heapUsed - before.heapUsed), rssKiB: perConnectionKiB(after.rss - before.rss) }));
process.exit(0);
