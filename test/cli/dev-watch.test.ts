import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess, type LogLine } from '../support/processes.js';

/*
 * `agentplane dev --watch` (what `npm run dev` runs): a save of the agents module or of a file
 * it imports reloads the agents in the running process, one log line per reload; the
 * in-memory sessions stay; a broken save is one error line and the old agents keep serving;
 * the LangGraph graph of `--config` is served throughout (loaded once, never reloaded).
 */

const dir = mkdtempSync(join(tmpdir(), 'agentplane-watch-'));
const GRAPH = fileURLToPath(new URL('../fixtures/langgraph/compiled.ts', import.meta.url));
let dev: AgentProcess;

const agents = (extra = ''): string => `import { defineAgent } from '@agentplane/server';
import { reply } from './reply.js';

export const greeter = defineAgent({
  id: 'greeter',
  description: 'Replies to input.name.',
  entry: 'greet',
  nodes: { greet: async (state) => ({ greeting: reply(String(state.name)) }) },
  edges: { greet: '__end__' },
});
${extra}
export default [greeter${extra ? ', second' : ''}];
`;
const SECOND = "export const second = defineAgent({ id: 'second', description: 'Two.', entry: 'a', nodes: { a: () => ({ two: 2 }) }, edges: {} });";
const reply = (version: string): string => `export const reply = (name) => '${version} ' + name;\n`;

const reloaded = (l: LogLine): boolean => l.json?.msg === 'agents reloaded';
const failed = (l: LogLine): boolean => l.json?.msg === 'agents reload failed';

/** Waits for the `count`-th line matching `predicate`. */
const nth = (predicate: (l: LogLine) => boolean, count: number) => dev.waitForLine(() => dev.lines.filter(predicate).length >= count, 60_000);

async function greet(sessionId?: string): Promise<Record<string, unknown>> {
  const run = await call(`${dev.url}/api/runs/wait`, {
    method: 'POST',
    json: { agent_id: 'greeter', input: { name: 'Ada' }, wait_ms: 30_000, ...(sessionId ? { session_id: sessionId } : {}) },
  });
  expect(run.body).toMatchObject({ status: 'completed' });
  return (run.body as { state: Record<string, unknown> }).state;
}

const agentIds = async (): Promise<string[]> =>
  ((await call(`${dev.url}/api/agents`)).body as { agents: { id: string }[] }).agents.map((a) => a.id);

beforeAll(async () => {
  writeFileSync(join(dir, 'agents.js'), agents());
  writeFileSync(join(dir, 'reply.js'), reply('v1'));
  writeFileSync(join(dir, 'langgraph.json'), JSON.stringify({ graphs: { graph: `${GRAPH}:graph` } }));
  dev = await startProcess({
    entry: 'src/cli/main.ts',
    args: ['dev', '--watch', '--config', join(dir, 'langgraph.json')],
    env: { REDIS_URL: undefined, AGENTS_MODULE: join(dir, 'agents.js'), LOG_LEVEL: 'info' },
    // tsx compiles the sources at start: a minute and more on a loaded 2-core machine.
    readyTimeoutMs: 150_000,
  });
}, 180_000);

afterAll(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('reloads a changed file the module imports: the next run uses the new code, the sessions stay', async () => {
  expect(await greet('kept')).toMatchObject({ greeting: 'v1 Ada' });
  // The watch starts once the module is loaded: a save before the first line would be lost to it.
  await dev.waitForLine((l) => l.json?.msg === 'watching the agents module', 30_000);

  writeFileSync(join(dir, 'reply.js'), reply('v2'));
  const line = await nth(reloaded, 1);
  expect(line.json).toMatchObject({ level: 30, agents: ['greeter'], module: join(dir, 'agents.js') });
  expect(await greet()).toMatchObject({ greeting: 'v2 Ada' });
  const kept = await call(`${dev.url}/api/sessions/state?session_id=kept`);
  expect(kept.status).toBe(200);
  expect(kept.body).toMatchObject({ state: { greeting: 'v1 Ada' } });
}, 120_000);

it('reloads the module itself: a new agent is listed, the graph stays', async () => {
  expect(await agentIds()).toEqual(['greeter', 'graph']);
  writeFileSync(join(dir, 'agents.js'), agents(SECOND));
  await nth(reloaded, 2);
  expect(await agentIds()).toEqual(['greeter', 'second', 'graph']);
}, 120_000);

it('a broken save is one error line naming the file; the old agents keep serving', async () => {
  writeFileSync(join(dir, 'reply.js'), 'export const reply = (name) => ;\n');
  const line = await nth(failed, 1);
  expect(line.json).toMatchObject({ level: 50 });
  expect(String(line.json!.error)).toMatch(new RegExp(`${join(dir, 'reply.js').replace(/[.]/g, '\\.')}:1\\b.*SyntaxError`));
  expect(await agentIds()).toEqual(['greeter', 'second', 'graph']);
  expect(await greet()).toMatchObject({ greeting: 'v2 Ada' });

  writeFileSync(join(dir, 'reply.js'), reply('v3'));
  await nth(reloaded, 3);
  expect(await greet()).toMatchObject({ greeting: 'v3 Ada' });
  // One line per reload and per failure: three saves that loaded, one that did not.
  expect(dev.lines.filter(reloaded)).toHaveLength(3);
  expect(dev.lines.filter(failed)).toHaveLength(1);
  expect(dev.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '')).toEqual([]);
}, 120_000);
