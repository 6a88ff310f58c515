import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError, createClient } from '../../src/client/index.js';
import { main } from '../../src/cli/main.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';

/**
 * The typed client and the CLI start runs with a generated Idempotency-Key, the same on their
 * own retries. In front of the API sits a real HTTP proxy that, for the first `failures`
 * starts, passes the request on (the run is created) and then answers 503 as a stalled Redis
 * makes the API do: the client's retry must answer that run, never start a second one.
 */

const START_PATHS = new Set(['/api/runs', '/api/runs/wait', '/api/runs/stream']);

interface Proxy {
  url: string;
  /** The Idempotency-Key of each start that reached the proxy ('' without one), in order. */
  keys: string[];
  /** The next `count` starts reach the API, and their answers are replaced with 503. */
  fail(count: number): void;
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const keys: string[] = [];
  let failures = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0]!;
      const start = req.method === 'POST' && START_PATHS.has(path);
      if (start) keys.push(String(req.headers['idempotency-key'] ?? ''));
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'idempotency-key', 'accept', 'last-event-id']) {
        if (req.headers[name] !== undefined) headers[name] = String(req.headers[name]);
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) });
      if (start && failures > 0) {
        failures -= 1;
        await upstream.body?.cancel();
        res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
        res.end(JSON.stringify({ error: { code: 'unavailable', message: 'Storage is unreachable; retry shortly.' } }));
        return;
      }
      const passed: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') passed[name] = value;
      });
      res.writeHead(upstream.status, passed);
      const reader = upstream.body?.getReader();
      for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) res.write(read.value);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    fail: (count) => {
      failures = count;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the typed client and the CLI send an Idempotency-Key per start, reused on their retries', () => {
  let app: TestApi;
  let proxy: Proxy;

  beforeAll(async () => {
    app = await startTestApi();
    proxy = await startProxy(app.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await app?.close();
  });

  async function runsOfSession(sessionId: string): Promise<string[]> {
    const page = await fetch(`${app.url}/api/runs?session_id=${sessionId}`);
    return ((await page.json()) as { runs: { id: string }[] }).runs.map((r) => r.id);
  }

  const newKeys = () => proxy.keys.splice(0);

  it('runs.start: a 503 after the run was created is retried with the same key and answers that run', async () => {
    const client = createClient({ baseUrl: proxy.url });
    newKeys();
    proxy.fail(2);
    const ticket = await client.runs.start({ agent_id: 'echo', input: { text: 'retried' } });
    const keys = newKeys();
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(ticket.status).toBe('queued');
    expect(await runsOfSession(ticket.session_id)).toEqual([ticket.run_id]);

    // A second logical start: a new key.
    const other = await client.runs.start({ agent_id: 'echo', input: { text: 'retried' } });
    expect(other.run_id).not.toBe(ticket.run_id);
    const [otherKey] = newKeys();
    expect(otherKey).not.toBe(keys[0]);
  });

  it('runs.wait and runs.stream retry with their key too; a key given by the caller is the one sent', async () => {
    const client = createClient({ baseUrl: proxy.url });
    newKeys();
    proxy.fail(1);
    const waited = await client.runs.wait({ agent_id: 'echo', input: { text: 'waited' }, wait_ms: 20_000 }, { idempotencyKey: 'my-start-1' });
    expect(newKeys()).toEqual(['my-start-1', 'my-start-1']);
    expect(waited.status).toBe('completed');
    expect(await runsOfSession(waited.session_id)).toEqual([waited.id]);

    proxy.fail(1);
    const stream = await client.runs.stream({ agent_id: 'echo', input: { text: 'streamed' } });
    const keys = newKeys();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    const types: string[] = [];
    for await (const { event } of stream) types.push(event.type);
    // The first attempt's run completed before the retry: the replay's stream ends at once, and the run is the only one.
    await waitFor('the run to complete', async () => (await (await fetch(`${app.url}/api/runs/${stream.runId}`)).json()).status === 'completed');
    expect(await runsOfSession(stream.sessionId)).toEqual([stream.runId]);
    expect(types.filter((t) => t === 'failed')).toEqual([]);
  });

  it('does not retry an answer a retry cannot change (4xx), nor past its retries', async () => {
    const client = createClient({ baseUrl: proxy.url });
    newKeys();
    const refused = await client.runs.start({ agent_id: 'no-such-agent' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('unknown_agent');
    expect(newKeys()).toHaveLength(1);

    proxy.fail(5);
    const unavailable = await client.runs.start({ agent_id: 'echo' }, { retries: 1 }).catch((error: unknown) => error);
    expect((unavailable as ApiError).status).toBe(503);
    expect(newKeys()).toHaveLength(2);
    proxy.fail(0);
  });

  it('agentplane runs start: one key for the command, the same on its retry; --idempotency-key names it', async () => {
    newKeys();
    proxy.fail(1);
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      expect(await main(['node', 'agentplane', 'runs', 'start', 'echo', '--input', '{"text":"cli"}', '--url', proxy.url, '--json'])).toBe(0);
      expect(await main(['node', 'agentplane', 'runs', 'start', 'echo', '--idempotency-key', 'cli-key-1', '--url', proxy.url, '--json'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    const keys = newKeys();
    expect(keys).toHaveLength(3);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe('cli-key-1');
    const ticket = JSON.parse(out[0]!) as { run_id: string; session_id: string };
    expect(await runsOfSession(ticket.session_id)).toEqual([ticket.run_id]);
  });
});
