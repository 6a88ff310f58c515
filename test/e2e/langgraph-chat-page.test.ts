import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi } from '../support/app.js';
import { ensureBuilt, ROOT } from '../support/build.js';
import { launchChromium, pageProblems, seriousViolations } from '../support/console.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * The chat example (examples/langgraph/chat-page: useStream of @langchain/react, LangGraph's
 * streaming protocol over HTTP, on preact/compat) in Debian's Chromium against agentplane on
 * Redis: two API processes and a worker running the `chat` graph of examples/langgraph, behind
 * this test's own round-robin proxy, so one page's calls land on both replicas. The page comes
 * from another origin (a static server of this test) and is given the API with `?api=`: every
 * call is cross-origin (CORS; without authentication the default allows pages of loopback
 * origins, such as this one). The fake model waits FAKE_MODEL_DELAY_MS before each chunk: the
 * answer visibly streams in, and a reload lands mid-run.
 */

const DELAY_MS = 1_500;
const SUNNY = (city: string) => `It is always sunny in ${city}.`;
/** tsx compiles the sources at each process start: a minute and more on a loaded 2-core machine. */
const START_MS = 300_000;

interface Proxied {
  method: string;
  path: string;
  replica: number;
}

/**
 * An HTTP proxy on 127.0.0.1 sending each request to the next of `targets` in turn. Bodies are
 * piped both ways as they come, so event streams pass through unbuffered; a client that goes
 * away closes its upstream request.
 */
async function startProxy(targets: readonly string[]): Promise<{ url: string; log: Proxied[]; close(): Promise<void> }> {
  const log: Proxied[] = [];
  let next = 0;
  const server: Server = createServer((req, res) => {
    const replica = next++ % targets.length;
    log.push({ method: req.method ?? '', path: req.url ?? '', replica });
    const upstream = request(new URL(req.url ?? '/', targets[replica]), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A static server on 127.0.0.1 (an origin of its own) serving the built page's files at `/`. */
async function startPageServer(): Promise<{ url: string; close(): Promise<void> }> {
  // The bundle `npm run build` writes, built in memory by the same script.
  const script = new URL('../../scripts/build-chat-page.mjs', import.meta.url).href;
  const { buildChatPage } = (await import(script)) as { buildChatPage(): Promise<Map<string, Buffer>> };
  const files = await buildChatPage();
  const types: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'application/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };
  const server = createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://page').pathname.slice(1) || 'index.html';
    const body = files.get(name);
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': types[name.split('.').pop()!] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the chat page on two API replicas and a worker on Redis, behind a round-robin proxy', () => {
  let redis: TestRedis | undefined;
  const processes: AgentProcess[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
  let pages: Awaited<ReturnType<typeof startPageServer>> | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    const env = {
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: uniquePrefix('chat-page'),
      AGENTS_MODULE: undefined,
      SERVICE_LANGGRAPH_JSON: 'examples/langgraph/langgraph.json',
      SERVICE_EXAMPLES: 'true',
      OPENAI_API_KEY: undefined,
      FAKE_MODEL_DELAY_MS: String(DELAY_MS),
      LOG_LEVEL: 'warn',
    };
    const started = await Promise.allSettled([
      startProcess({ entry: 'src/main/api.ts', env, readyTimeoutMs: START_MS }),
      startProcess({ entry: 'src/main/api.ts', env, readyTimeoutMs: START_MS }),
      startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env, readyTimeoutMs: START_MS }),
    ]);
    for (const result of started) if (result.status === 'fulfilled') processes.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    proxy = await startProxy(processes.slice(0, 2).map((api) => api.url));
    pages = await startPageServer();
    browser = await launchChromium();
  }, START_MS);

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await proxy?.close();
    const codes = await Promise.all(processes.map((process) => process.stop()));
    await redis?.stop();
    expect(codes).toEqual(processes.map(() => 0));
  }, 60_000);

  /** A page in a context of its own, from the page server, on the API through the proxy, recording every text the last answer showed. */
  async function openChat(at = `${pages!.url}/?api=${encodeURIComponent(proxy!.url)}`): Promise<{ context: BrowserContext; page: Page; problems: string[]; allowed: (string | undefined)[] }> {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems = pageProblems(page);
    // A request the browser failed (CORS among others); the event streams the hook closes itself are aborted, not failed.
    page.on('requestfailed', (request) => {
      const failure = request.failure()?.errorText;
      if (failure !== 'net::ERR_ABORTED') problems.push(`requestfailed: ${request.method()} ${request.url()} ${failure}`);
    });
    // The Access-Control-Allow-Origin of each answer of the API (another origin than the page's).
    const allowed: (string | undefined)[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(proxy!.url)) allowed.push(response.headers()['access-control-allow-origin']);
    });
    // Runs in the page before its scripts, after each load: the texts shown, in order, one per change.
    await page.addInitScript(() => {
      const answers: string[] = [];
      Object.assign(globalThis, { answers });
      new MutationObserver(() => {
        const text = document.querySelector('li.message.ai:last-child .text')?.textContent;
        if (text != null && answers.at(-1) !== text) answers.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.goto(at);
    return { context, page, problems, allowed };
  }

  const answersShown = (page: Page) => page.evaluate(() => (globalThis as unknown as { answers: string[] }).answers);
  const threadOf = (page: Page) => new URL(page.url()).searchParams.get('thread');
  const messagesOf = (page: Page) => page.locator('li.message').evaluateAll((items) => items.map((item) => [item.getAttribute('data-type'), item.textContent]));
  const lastAnswer = (page: Page) => page.locator('li.message.ai:last-child .text');
  /** The protocol event streams the pages opened on a thread, through the proxy. */
  const eventStreamsOf = (threadId: string) => proxy!.log.filter((entry) => entry.method === 'POST' && entry.path === `/threads/${threadId}/stream/events`).length;
  // Straight to a replica: the proxy's log holds the page's calls only.
  const thread = async (id: string) => (await call(`${processes[0]!.url}/threads/${id}`)).body as { status: string; values: { messages: { type: string; content: string }[] } };

  async function ask(page: Page, city: string): Promise<string> {
    await page.getByLabel('A city').fill(city);
    await page.getByRole('button', { name: 'Send' }).click();
    return waitFor('the thread id in the URL', () => threadOf(page) ?? undefined, 30_000);
  }

  async function expectQuestion(page: Page, city: string): Promise<void> {
    const approval = page.getByRole('region', { name: 'Approval' });
    await approval.waitFor({ timeout: 60_000 });
    expect(await approval.locator('p').textContent()).toBe(`Run get_weather({"city":"${city}"})?`);
    expect(await page.getByRole('status').textContent()).toContain('Waiting for your approval.');
    expect(await messagesOf(page)).toEqual([
      ['human', `You${city}`],
      ['ai', `Assistantget_weather({"city":"${city}"})`],
    ]);
  }

  /** The page and the thread at the end of the turn: the tool's message (its result, or its refusal) and the model's answer repeating it. */
  async function expectAnswered(page: Page, threadId: string, city: string, answer = SUNNY(city)): Promise<void> {
    await waitFor('the final answer and the page at rest', async () => (await lastAnswer(page).textContent()) === answer && (await page.getByRole('status').textContent())?.startsWith('Ready.'), 60_000, 100);
    expect(await messagesOf(page)).toEqual([
      ['human', `You${city}`],
      ['ai', `Assistantget_weather({"city":"${city}"})`],
      ['tool', `Tool${answer}`],
      ['ai', `Assistant${answer}`],
    ]);
    expect(await page.getByRole('region', { name: 'Approval' }).count()).toBe(0);
    const stored = await thread(threadId);
    expect(stored.status).toBe('idle');
    expect(stored.values.messages.map((message) => [message.type, message.content])).toEqual([
      ['human', city],
      ['ai', ''],
      ['tool', answer],
      ['ai', answer],
    ]);
  }

  /** The texts the answer showed before the whole of it: its words coming in, each a prefix of the end. */
  const partialAnswers = (texts: string[], city: string) => texts.filter((text) => text !== '' && text !== SUNNY(city) && SUNNY(city).startsWith(text));

  it('streams the tool call, shows the question, approves on a click and streams the answer to its end', { timeout: 180_000 }, async () => {
    const { context, page, problems, allowed } = await openChat();
    try {
      const threadId = await ask(page, 'Paris');
      await expectQuestion(page, 'Paris');
      expect((await thread(threadId)).status).toBe('interrupted');

      await page.getByRole('button', { name: 'Approve' }).click();
      await expectAnswered(page, threadId, 'Paris');
      // The words came one by one: the answer showed its growing prefixes before the whole.
      expect(partialAnswers(await answersShown(page), 'Paris').length).toBeGreaterThanOrEqual(3);
      expect(await seriousViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
      // Every call went to the API's origin, and each answer allowed the page's (the default CORS
      // without authentication: pages of loopback origins, as a chat UI on localhost:3000).
      expect(allowed.length).toBeGreaterThan(4);
      expect(new Set(allowed)).toEqual(new Set([pages!.url]));

      const calls = proxy!.log.filter((entry) => entry.path.startsWith(`/threads/${threadId}`));
      // Two commands (run.start, then input.respond), the rest event streams and reads; on both replicas.
      const commands = calls.filter((entry) => entry.method === 'POST' && entry.path === `/threads/${threadId}/commands`);
      expect(commands).toHaveLength(2);
      expect(eventStreamsOf(threadId)).toBeGreaterThanOrEqual(1);
      expect(new Set(calls.map((entry) => entry.replica))).toEqual(new Set([0, 1]));
    } finally {
      await context.close();
    }
  });

  it('served by the API itself (its own origin, under its CSP), asks and answers the same', { timeout: 180_000 }, async () => {
    const { context, page, problems } = await openChat(`${proxy!.url}/examples/chat/`);
    try {
      const threadId = await ask(page, 'Lyon');
      await expectQuestion(page, 'Lyon');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expectAnswered(page, threadId, 'Lyon');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('declines on Reject: the tool does not run and the model answers the refusal', { timeout: 180_000 }, async () => {
    const { context, page, problems } = await openChat();
    try {
      const threadId = await ask(page, 'Rome');
      await expectQuestion(page, 'Rome');
      await page.getByRole('button', { name: 'Reject' }).click();
      await expectAnswered(page, threadId, 'Rome', 'The user declined to run get_weather.');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('reloaded mid-run, joins the run again: the question after the first reload, the same end after the second', { timeout: 240_000 }, async () => {
    const { context, page, problems } = await openChat();
    try {
      const threadId = await ask(page, 'Oslo');
      // The thread id is in the URL once the run started. useStream joins a thread's run on load
      // only when the thread's state says it is active (nodes to run next, or an interrupt): a
      // run still queued, before its first checkpoint, reads as an idle thread. So: reload once
      // the run is under way in the graph.
      await waitFor(
        'the run under way in the graph',
        async () => (await thread(threadId)).status === 'busy' && ((await call(`${processes[0]!.url}/threads/${threadId}/state`)).body as { next: string[] }).next.length > 0,
        30_000,
        50,
      );
      await page.reload();
      expect(threadOf(page)).toBe(threadId);
      await expectQuestion(page, 'Oslo');

      await page.getByRole('button', { name: 'Approve' }).click();
      await waitFor('the first words of the answer', async () => partialAnswers([(await lastAnswer(page).textContent()) ?? ''], 'Oslo').length === 1, 60_000, 50);
      const streamsBefore = eventStreamsOf(threadId);
      await page.reload();
      // Streaming again after the reload while the thread is still busy: the page joined the running run.
      await waitFor('the reloaded page streaming', async () => (await page.getByRole('status').textContent())?.startsWith('Streaming…'), 30_000, 50);
      expect((await thread(threadId)).status).toBe('busy');
      await expectAnswered(page, threadId, 'Oslo');
      // The reloaded page opened its thread's event stream again (its content and its lifecycle watcher).
      expect(eventStreamsOf(threadId)).toBeGreaterThan(streamsBefore);
      // Words came in after the reload too: the page streamed the rest of the run, not only its end.
      expect(partialAnswers(await answersShown(page), 'Oslo').length).toBeGreaterThanOrEqual(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('serving the chat page', () => {
  it('is off by default: /examples/chat/ is 404', async () => {
    const api = await startTestApi();
    try {
      for (const path of ['/examples/chat/', '/examples/chat/app.js']) expect((await call(`${api.url}${path}`)).status, path).toBe(404);
    } finally {
      await api.close();
    }
  });

  it('with SERVICE_EXAMPLES=true, serves its page, script and style from source, under the console\'s CSP', { timeout: 120_000 }, async () => {
    const api = await startTestApi({ env: { SERVICE_EXAMPLES: 'true' } });
    try {
      const bare = await fetch(`${api.url}/examples/chat`, { redirect: 'manual' });
      expect([bare.status, bare.headers.get('location')]).toEqual([302, '/examples/chat/']);
      const page = await fetch(`${api.url}/examples/chat/`);
      expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
      expect(await page.text()).toContain('<script type="module" src="./app.js"></script>');
      const script = await fetch(`${api.url}/examples/chat/app.js`);
      expect([script.status, script.headers.get('content-type')]).toEqual([200, 'application/javascript; charset=utf-8']);
      // useStream's own code (the protocol's event stream), and no React: preact/compat stands in for it.
      const code = await script.text();
      expect(code).toContain('/stream/events');
      expect(code).not.toContain('react.production');
      const post = await call(`${api.url}/examples/chat/`, { method: 'POST' });
      expect([post.status, post.body.error.code]).toEqual([405, 'method_not_allowed']);
      expect((await call(`${api.url}/examples/chat/nope.js`)).status).toBe(404);
    } finally {
      await api.close();
    }
  });

  it('is built into dist/examples/chat by `npm run build` and served from there by the compiled API', { timeout: 300_000 }, async () => {
    await ensureBuilt();
    const built = (name: string) => readFileSync(join(ROOT, 'dist', 'examples', 'chat', name));
    const proc = await startProcess({ entry: 'dist/src/main/api.js', env: { REDIS_URL: undefined, LOG_LEVEL: 'info', SERVICE_EXAMPLES: 'true' } });
    try {
      const listening = await proc.waitForLine((line) => line.json?.msg === 'agentplane api listening');
      expect(listening.json).toMatchObject({ chat_example: `${proc.url}/examples/chat/` });
      for (const name of ['index.html', 'app.js', 'app.css']) {
        const response = await fetch(`${proc.url}/examples/chat/${name}`);
        expect(response.status, name).toBe(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(built(name)), name).toBe(true);
      }
    } finally {
      await proc.stop();
    }
  });
});
