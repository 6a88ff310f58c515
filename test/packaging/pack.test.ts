import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/build.js';
import { startProcess } from '../support/processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

/*
 * agentplane as its users get it: `npm pack`, the tarball installed into a temporary project
 * made of examples/agents, type-checked there with tsc against the package's own .d.ts, and
 * run with plain `node` (no tsx): the compiled API and worker on Redis with the example's
 * agents, `@agentplane/server/client` driving a run to `completed`, `@agentplane/server/integrations`
 * and the embedding factory on a Koa app of the project's own, and the image's layout (agents
 * mounted under /app with `node_modules/@agentplane/server -> ../..`, as the Dockerfile makes it) with a `.ts` module
 * and a `.ts` LangGraph graph (SERVICE_LANGGRAPH_JSON), first without its optional peer dependencies.
 */

const work = mkdtempSync(join(tmpdir(), 'agentplane-pack-'));
const project = join(work, 'project');
let redis: TestRedis;
let tarballFiles: string[] = [];

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (bounded); resolves with its exit code and output. */
function run(command: string, args: readonly string[], cwd: string, timeoutMs = 120_000, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, env, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr: error && code === -1 ? `${stderr}\n${error.message}` : stderr });
    });
  });
}

async function succeed(command: string, args: readonly string[], cwd: string, timeoutMs?: number, env?: NodeJS.ProcessEnv): Promise<string> {
  const result = await run(command, args, cwd, timeoutMs, env);
  expect(result.code, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** Plain node for the project's scripts: nothing of vitest's or tsx's environment. */
const plainEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...extra };
  delete env.NODE_OPTIONS;
  delete env.REDIS_URL;
  return env;
};

const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** A TypeScript agents module, loaded by the compiled processes through tsx's tsImport; it adds the example's agents. */
const typedAgents = (examples: string): string => `import { defineAgent, type Agent, type NodeContext } from '@agentplane/server';
import examples from '${examples}';

const shout = async (state: Record<string, unknown>, ctx: NodeContext) => ({ loud: String(state.text).toUpperCase(), by: ctx.agent_id });
export const typed: Agent = defineAgent({ id: 'typed', description: 'Upper-cases input.text.', entry: 'shout', nodes: { shout }, edges: {} });
export default [typed, ...examples];
`;

/** A LangGraph graph in TypeScript, loaded by the compiled API through tsx (SERVICE_LANGGRAPH_JSON). */
const TYPED_GRAPH = `import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({ text: Annotation<string>, loud: Annotation<string> });
export const graph = new StateGraph(State)
  .addNode('shout', (state: typeof State.State) => ({ loud: state.text.toUpperCase() }))
  .addEdge(START, 'shout')
  .addEdge('shout', END)
  .compile();
`;

/** Node's types rather than a guess: a node that returns a number is refused by tsc. */
const MISTYPED_AGENT = `import { defineAgent } from '@agentplane/server';
export const wrong = defineAgent({ id: 'wrong', description: '', entry: 'a', nodes: { a: () => 42 }, edges: {} });
`;

/** Drives a run of `greeter` with the typed client, and lists what `@agentplane/server/integrations` exports. */
const DRIVE = `// @ts-check
import { createClient } from '@agentplane/server/client';
import * as integrations from '@agentplane/server/integrations';

const client = createClient({ baseUrl: process.argv[2] ?? '' });
const stream = await client.runs.stream({ agent_id: 'greeter', input: { name: 'Ada' } });
/** @type {string[]} */
const words = [];
/** @type {string[]} */
const types = [];
for await (const { event } of stream) {
  types.push(event.type);
  if (event.type === 'custom') words.push(String(/** @type {{ word?: unknown }} */ (event.data).word));
}
const { data, error } = await client.GET('/api/sessions/state', { params: { query: { session_id: stream.sessionId } } });
if (error) throw new Error(JSON.stringify(error));
const exported = Object.entries(integrations).filter(([, value]) => typeof value === 'function').map(([name]) => name);
console.log(JSON.stringify({ types, words, state: data.state, integrations: exported }));
`;

/** The embedding factory on a Koa app of the project's own, with the webhook receiver beside it. */
const EMBED = `// @ts-check
import { createServer } from 'node:http';
import Koa from 'koa';
import { createAgentplane } from '@agentplane/server';
import { WebhookReceiver, runBridge } from '@agentplane/server/integrations';
import agents from './index.js';

const plane = await createAgentplane({ agents, env: { LOG_LEVEL: 'warn', SERVICE_SWAGGER: 'false' } });
const receiver = new WebhookReceiver({ secret: 'hook-secret' });
receiver.on('greet', runBridge({ runControl: plane.composition.runs, tenant: 'DefaultTenant', agentId: 'greeter' }));
const app = new Koa();
app.use(plane.middleware);
app.use(receiver.middleware());
app.use((ctx) => {
  ctx.body = { mine: ctx.path };
});
const server = createServer(app.callback());
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const base = \`http://127.0.0.1:\${typeof address === 'object' && address ? address.port : 0}\`;

const mine = await (await fetch(\`\${base}/hello\`)).json();
const listed = await (await fetch(\`\${base}/api/agents\`)).json();
const delivered = await fetch(\`\${base}/webhook\`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'greet' },
  body: JSON.stringify({ name: 'Grace' }),
});
const waited = await (
  await fetch(\`\${base}/api/runs/wait\`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: 'greeter', input: { name: 'Linus' } }),
  })
).json();
console.log(JSON.stringify({ mine, listed, webhook: delivered.status, waited }));
server.close();
await plane.close();
`;

beforeAll(async () => {
  redis = await startRedis();
  await ensureBuilt();
  const packed = JSON.parse(
    await succeed('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT),
  ) as { filename: string; files: { path: string }[] }[];
  tarballFiles = packed[0]!.files.map((file) => file.path);
  const tarball = join(work, packed[0]!.filename);

  cpSync(join(ROOT, 'examples/agents'), project, { recursive: true, filter: (path) => !path.includes('node_modules') });
  await succeed(
    'npm',
    [
      'install', tarball, `koa@${versionOf('koa')}`, `@types/koa@${versionOf('@types/koa')}`, `@types/node@${versionOf('@types/node')}`,
      // The optional peer dependencies of graphs (SERVICE_LANGGRAPH_JSON), as a project with graphs installs them.
      `@langchain/langgraph@${versionOf('@langchain/langgraph')}`, `@langchain/core@${versionOf('@langchain/core')}`,
      '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline',
    ],
    project,
    300_000,
  );
  mkdirSync(join(project, 'typed'));
  writeFileSync(join(project, 'drive.js'), DRIVE);
  writeFileSync(join(project, 'embed.js'), EMBED);
}, 420_000);

afterAll(async () => {
  await redis?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the compiled code with its types, the Lua scripts, README and LICENSE, and no sources or tests', () => {
    for (const path of [
      'package.json', 'README.md', 'LICENSE', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/integrations/index.js',
      'dist/src/integrations/index.d.ts', 'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/src/main/api.js',
      'dist/src/main/worker.js', 'dist/src/main/webhooks.js', 'dist/src/cli/main.js',
    ]) {
      expect(tarballFiles, path).toContain(path);
    }
    const lua = readdirSync(join(ROOT, 'src/adapters/redis/lua'), { recursive: true }).filter((f) => String(f).endsWith('.lua'));
    for (const file of lua) expect(tarballFiles).toContain(`dist/src/adapters/redis/lua/${String(file)}`);
    const strays = tarballFiles.filter((path) => /\.map$|\.test\.|^(src|test|bench|helm|examples)\//.test(path) || (path.endsWith('.ts') && !path.endsWith('.d.ts')));
    expect(strays).toEqual([]);
  });

  it('installs the `agentplane` command', async () => {
    const help = await succeed(join(project, 'node_modules/.bin/agentplane'), ['--help'], project, 60_000, plainEnv());
    expect(help).toMatch(/\bworker\b/);
  }, 90_000);

  it('type-checks a project that uses it: agents in JavaScript and TypeScript, the client, the integrations, embedding', async () => {
    writeFileSync(join(project, 'typed/agents.ts'), typedAgents('../index.js'));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        ...JSON.parse(readFileSync(join(ROOT, 'examples/agents/tsconfig.json'), 'utf8')),
        include: ['*.js', 'typed/*.ts'],
      }),
    );
    await succeed(process.execPath, [TSC, '-p', 'tsconfig.json'], project, 180_000);

    // The check can fail: the package's types are real, not `any`.
    writeFileSync(join(project, 'typed/wrong.ts'), MISTYPED_AGENT);
    writeFileSync(join(project, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', include: ['typed/wrong.ts'] }));
    const wrong = await run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], project, 180_000);
    rmSync(join(project, 'typed/wrong.ts'));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toMatch(/typed\/wrong\.ts.*error TS2322/);
  }, 420_000);

  it('runs the example agents on the compiled API and worker with plain node, driven by @agentplane/server/client', async () => {
    const env = { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: uniquePrefix('pack'), AGENTS_MODULE: './index.js', LOG_LEVEL: 'info' };
    const base = { cwd: project, plainNode: true, readyTimeoutMs: 90_000 };
    const [api, worker] = await Promise.all([
      startProcess({ ...base, entry: 'node_modules/@agentplane/server/dist/src/main/api.js', env }),
      startProcess({ ...base, entry: 'node_modules/@agentplane/server/dist/src/main/worker.js', env, portVariable: 'WORKER_PORT' }),
    ]);
    try {
      const agents = (await (await fetch(`${api.url}/api/agents`)).json()) as { agents: { id: string }[] };
      expect(agents.agents.map((a) => a.id)).toEqual(['greeter', 'refund']);

      const out = await succeed(process.execPath, ['drive.js', api.url], project, 90_000, plainEnv());
      const result = JSON.parse(out) as { types: string[]; words: string[]; state: Record<string, unknown>; integrations: string[] };
      expect(result.types.at(-1)).toBe('completed');
      expect(result.words).toEqual(['Hello,', 'Ada!']);
      expect(result.state).toMatchObject({ name: 'Ada', greeting: 'Hello, Ada!', signed: expect.stringContaining('Hello, Ada! (greeter, run ') });
      expect(result.integrations).toEqual(
        expect.arrayContaining(['WebhookReceiver', 'runBridge', 'DiscordAdapter', 'SlackAdapter', 'TelegramAdapter', 'TelegramApprovalBridge']),
      );
      // The API only enqueues on Redis: the worker executed the run, with the module's agents.
      expect(worker.lines.some((line) => line.json?.msg === 'agentplane worker started')).toBe(true);
    } finally {
      await Promise.all([api.stop(), worker.stop()]);
    }
  }, 240_000);

  it('mounts the API on a Koa app of the project, beside the webhook receiver of @agentplane/server/integrations', async () => {
    const out = await succeed(process.execPath, ['embed.js'], project, 90_000, plainEnv());
    const result = JSON.parse(out) as { mine: unknown; listed: { agents: { id: string }[] }; webhook: number; waited: Record<string, any> };
    expect(result.mine).toEqual({ mine: '/hello' });
    expect(result.listed.agents.map((a) => a.id)).toEqual(['greeter', 'refund']);
    expect(result.webhook).toBe(200);
    expect(result.waited).toMatchObject({ status: 'completed', state: { greeting: 'Hello, Linus!' } });
  }, 120_000);

  it("loads agents and graphs the image's way: a .ts module, an agents package and a .ts graph under the package's directory", async () => {
    // The image: the package at /app, its production dependencies in /app/node_modules, and
    // the link the Dockerfile's deps stage makes; agents mounted at /app/agents.
    const app = join(work, 'image/app');
    cpSync(join(project, 'node_modules/@agentplane/server'), app, { recursive: true });
    mkdirSync(join(app, 'node_modules'));
    for (const entry of readdirSync(join(project, 'node_modules'))) {
      if (entry !== '@agentplane' && entry !== '.bin' && entry !== '@langchain' && !entry.startsWith('.')) {
        symlinkSync(join(project, 'node_modules', entry), join(app, 'node_modules', entry));
      }
    }
    const link = /\bln -s (\S+) (node_modules\/@agentplane\/server)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    expect(link, 'the Dockerfile links node_modules/@agentplane/server to the package').not.toBeNull();
    mkdirSync(join(app, 'node_modules/@agentplane'));
    symlinkSync(link![1]!, join(app, link![2]!));
    cpSync(join(ROOT, 'examples/agents'), join(app, 'agents'), { recursive: true });
    mkdirSync(join(app, 'typed'));
    writeFileSync(join(app, 'typed/agents.ts'), typedAgents('../agents/index.js'));
    mkdirSync(join(app, 'graphs'));
    writeFileSync(join(app, 'graphs/graph.ts'), TYPED_GRAPH);
    writeFileSync(join(app, 'graphs/langgraph.json'), JSON.stringify({ graphs: { 'typed-graph': './graph.ts:graph' } }));
    const env = { REDIS_URL: undefined, AGENTS_MODULE: join(app, 'typed/agents.ts'), SERVICE_LANGGRAPH_JSON: join(app, 'graphs/langgraph.json'), LOG_LEVEL: 'warn' };

    // No @langchain/* under /app yet (the image installs production dependencies only): one line saying what to install.
    const bare = await startProcess({ cwd: app, plainNode: true, entry: 'dist/src/main/api.js', env, ready: 'spawned' });
    expect(await bare.exited).toBe(1);
    expect(bare.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '').map((l) => l.text)).toEqual([
      'Invalid configuration: SERVICE_LANGGRAPH_JSON: graphs need @langchain/langgraph and @langchain/core: npm install @langchain/langgraph @langchain/core',
    ]);
    symlinkSync(join(project, 'node_modules/@langchain'), join(app, 'node_modules/@langchain'));

    const api = await startProcess({ cwd: app, plainNode: true, entry: 'dist/src/main/api.js', env, readyTimeoutMs: 90_000 });
    try {
      const agents = (await (await fetch(`${api.url}/api/agents`)).json()) as { agents: { id: string; nodes: string[]; entry: string }[] };
      expect(agents.agents.map((a) => a.id)).toEqual(['typed', 'greeter', 'refund', 'typed-graph']);
      expect(agents.agents.at(-1)).toMatchObject({ nodes: ['shout'], entry: '__start__', description: 'LangGraph graph ./graph.ts:graph' });
      const waited = await fetch(`${api.url}/api/runs/wait`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_id: 'typed', input: { text: 'mounted' } }),
      });
      expect(await waited.json()).toMatchObject({ status: 'completed', state: { loud: 'MOUNTED', by: 'typed' } });
    } finally {
      await api.stop();
    }
  }, 180_000);
});
