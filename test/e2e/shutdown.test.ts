import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { uniquePrefix, usePrivateRedis } from '../support/redis.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Opens a request and collects its whole response. The request is left open for the caller
 * to write its body and end it; `agent` defaults to a fresh connection.
 */
function open(port: number, method: string, path: string, options: { agent?: Agent; contentLength?: number } = {}) {
  const req = request({
    host: '127.0.0.1',
    port,
    method,
    path,
    agent: options.agent ?? false,
    headers: options.contentLength === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': options.contentLength },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', reject);
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  return { req, answer };
}

/** A bodiless request, sent at once. */
function get(port: number, path: string, agent?: Agent): Promise<Answer> {
  const { req, answer } = open(port, 'GET', path, { agent });
  req.end();
  return answer;
}

/** True once nothing accepts connections on the port any more (the server stopped listening). */
async function waitUntilRefused(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    });
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`port ${port} still accepts connections after ${timeoutMs} ms`);
}

const completed = (proc: AgentProcess) => proc.lines.some((l) => l.json?.msg === 'graceful shutdown complete');

describe('graceful shutdown of an API process on Redis', () => {
  const redis = usePrivateRedis();

  /** An API process on the private Redis, stopped when the test ends whatever happened. */
  const start = async (delayMs: number): Promise<AgentProcess> => {
    const proc = await startProcess({
      entry: 'src/main/api.ts',
      env: {
        REDIS_URL: redis.url,
        SERVICE_KEY_PREFIX: uniquePrefix('shutdown'),
        SERVICE_SHUTDOWN_DELAY_MS: String(delayMs),
        SERVICE_SHUTDOWN_TIMEOUT_MS: '20000',
        LOG_LEVEL: 'info',
      },
    });
    onTestFinished(() => proc.stop().then(() => undefined));
    return proc;
  };

  it('SIGTERM during a slow request: readiness turns 503, the request completes, exit 0', async () => {
    const proc = await start(3000);
    const body = JSON.stringify({ state: { edited: true, note: 'x'.repeat(256) } });
    const half = Math.floor(body.length / 2);

    // Headers and half the body: the server is reading this request's body when SIGTERM arrives.
    const slow = open(proc.port, 'POST', '/api/sessions/state?session_id=slow-1', { contentLength: Buffer.byteLength(body) });
    slow.answer.catch(() => {}); // awaited below; a failure before that must not go unhandled
    await new Promise<void>((resolve, reject) => slow.req.write(body.slice(0, half), (error) => (error ? reject(error) : resolve())));
    proc.signal('SIGTERM');
    await proc.waitForLine((l) => l.json?.msg === 'graceful shutdown started');

    const ready = await get(proc.port, '/health/ready');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toMatchObject({ status: 'unavailable', checks: expect.any(Object) });

    // Past the delay the listener closes, yet the half-read request holds the shutdown open.
    await waitUntilRefused(proc.port, 15_000);
    expect(completed(proc)).toBe(false);

    slow.req.end(body.slice(half));
    const answer = await slow.answer;
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.text)).toEqual({ error: { code: 'not_found', message: expect.any(String) } });

    expect(await proc.exited).toBe(0);
    expect(completed(proc)).toBe(true);
  });

  it('a second signal during the shutdown does not cut it short', async () => {
    // Ctrl-C on `npm start` delivers SIGINT twice (the terminal's, and the one npm forwards);
    // orchestrators may repeat SIGTERM. The sequence already running must simply go on.
    const proc = await start(1000);
    proc.signal('SIGINT');
    await proc.waitForLine((l) => l.json?.msg === 'graceful shutdown started');
    proc.signal('SIGINT');
    expect(await proc.exited).toBe(0);
    expect(completed(proc)).toBe(true);
  });

  it('an idle process, even with an idle keep-alive connection open, exits 0 on SIGTERM', async () => {
    const proc = await start(200);
    const keepAlive = new Agent({ keepAlive: true });
    try {
      const first = await get(proc.port, '/api/sessions', keepAlive);
      expect(first.status).toBe(200);
      expect(first.headers.connection).toBe('keep-alive');
      proc.signal('SIGTERM');
      // The keep-alive timeout (66 s) exceeds the shutdown timeout (20 s): only closing idle
      // connections lets this exit 0 rather than 1.
      expect(await proc.exited).toBe(0);
      expect(completed(proc)).toBe(true);
    } finally {
      keepAlive.destroy();
    }
  });
});
