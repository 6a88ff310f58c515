import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { ensureBuilt, ROOT } from '../support/build.js';
import { startProcess } from '../support/processes.js';

/*
 * AGENTS_MODULE as a new user writes it (README, "Your own agents"), loaded by `npm start`
 * (tsx on the sources) and by the compiled entry (plain node, as the package runs it):
 * modules in a temporary directory, out of reach of any node_modules, that import
 * `@agentplane/server`; `.js` and `.ts` in a project whose package.json says "type": "commonjs"
 * (what `npm init -y` writes); `agents.js` beside an `agents.ts`; and every way a module can
 * fail to load, each one line on stderr naming the file and the fix.
 */

const work = mkdtempSync(join(tmpdir(), 'agentplane-agents-'));

/** Writes `files` (path → content) under `work`. */
function writeFiles(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), content);
  }
}

/**
 * An agent whose node reports whether its `defineAgent` is the running agentplane's own (the
 * module at input.runtime, a URL of the process's package): one copy of the runtime.
 */
const agentSource = (id: string, typed: boolean): string => `import { defineAgent } from '@agentplane/server';
import { greet } from './words.js';

export const agent = defineAgent({
  id: '${id}',
  description: 'Greets input.name.',
  entry: 'greet',
  nodes: {
    greet: async (state${typed ? ': Record<string, unknown>' : ''}) => ({
      greeting: greet(String(state.name)),
      same: (await import(String(state.runtime))).defineAgent === defineAgent,
    }),
  },
  edges: { greet: '__end__' },
});
export default [agent];
`;

const WORDS = "export const greet = (name) => `Hello, ${name}!`;\n";
const TYPED_WORDS = "export const greet = (name: string): string => `Hello, ${name}!`;\n";

beforeAll(async () => {
  writeFiles({
    'outside/agents.js': agentSource('outside-js', false),
    'outside/words.js': WORDS,
    'outside-ts/agents.ts': agentSource('outside-ts', true),
    'outside-ts/words.ts': TYPED_WORDS,
    // What `npm init -y` writes with npm 11, then the README's module in both languages; the
    // .ts one has other ids, so that the test sees which of the two was loaded.
    'commonjs/package.json': JSON.stringify({ name: 'mine', version: '1.0.0', main: 'index.js', type: 'commonjs' }),
    'commonjs/agents.js': agentSource('commonjs-js', false),
    'commonjs/agents.ts': agentSource('commonjs-ts', true),
    'commonjs/words.js': WORDS,
    'commonjs/words.ts': TYPED_WORDS,
  });
  await ensureBuilt();
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const RUNNERS = {
  'npm start (tsx on the sources)': { entry: 'src/main/api.ts', plainNode: false, runtime: pathToFileURL(join(ROOT, 'src/index.ts')).href },
  'the compiled entry (plain node)': { entry: 'dist/src/main/api.js', plainNode: true, runtime: pathToFileURL(join(ROOT, 'dist/src/index.js')).href },
} as const;

const MODULES: [string, string][] = [
  ['outside/agents.js', 'outside-js'],
  ['outside-ts/agents.ts', 'outside-ts'],
  ['commonjs/agents.js', 'commonjs-js'],
  ['commonjs/agents.ts', 'commonjs-ts'],
];

describe.each(Object.entries(RUNNERS))('%s', (_name, runner) => {
  it.each(MODULES)('loads %s: its agents, run on the running agentplane', async (module, id) => {
    const api = await startProcess({
      entry: runner.entry,
      plainNode: runner.plainNode,
      env: { REDIS_URL: undefined, AGENTS_MODULE: join(work, module), LOG_LEVEL: 'warn' },
      readyTimeoutMs: 150_000,
    });
    try {
      const agents = await call(`${api.url}/api/agents`);
      expect((agents.body as { agents: { id: string }[] }).agents.map((a) => a.id)).toEqual([id]);
      const run = await call(`${api.url}/api/runs/wait`, {
        method: 'POST',
        json: { agent_id: id, input: { name: 'Ada', runtime: runner.runtime }, wait_ms: 30_000 },
      });
      expect(run.body).toMatchObject({ status: 'completed', state: { greeting: 'Hello, Ada!', same: true } });
    } finally {
      await api.stop();
    }
  }, 240_000);
});

it('npm start loads the example package of the repository, which imports agentplane without installing it', async () => {
  const api = await startProcess({
    entry: 'src/main/api.ts',
    env: { REDIS_URL: undefined, AGENTS_MODULE: 'examples/agents/index.js', LOG_LEVEL: 'warn' },
    readyTimeoutMs: 150_000,
  });
  try {
    const agents = await call(`${api.url}/api/agents`);
    expect((agents.body as { agents: { id: string }[] }).agents.map((a) => a.id)).toEqual(['greeter', 'refund']);
    const run = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'greeter', input: { name: 'Ada' }, wait_ms: 30_000 } });
    expect(run.body).toMatchObject({ status: 'completed', state: { greeting: 'Hello, Ada!' } });
  } finally {
    await api.stop();
  }
}, 240_000);

describe('a module that cannot load: one line naming the file and the fix, and exit 1', () => {
  const FAILURES: [string, string, string, RegExp][] = [
    ['a syntax error', 'broken/syntax.js', "import { defineAgent } from '@agentplane/server';\nexport const agent = defineAgent({ id: 'x', ;\n", /syntax\.js:2\b.*SyntaxError.*fix the syntax/],
    ['a package that is not installed', 'broken/missing.js', "import pad from 'no-such-package-for-agentplane';\nexport default [pad];\n", /missing\.js imports no-such-package-for-agentplane, which is not installed.*npm install no-such-package-for-agentplane/],
    ['a file that is not there', 'broken/relative.js', "export { agent } from './nowhere.js';\n", /relative\.js imports .*nowhere\.js, which does not exist/],
    ['an error its code throws', 'broken/throws.js', "import { defineAgent } from '@agentplane/server';\nthrow new Error('no key for the model');\n", /throws\.js threw while loading: Error: no key for the model \(at .*throws\.js:2:7\)/],
    ['an invalid agent', 'broken/invalid.ts', "import { defineAgent } from '@agentplane/server';\nexport const a = defineAgent({ id: 'a', description: '', entry: 'nowhere', nodes: {}, edges: {} });\n", /invalid\.ts threw while loading: .*nowhere.*\(at .*invalid\.ts:2:\d+\)/],
    ['no agents', 'broken/empty.js', 'export const answer = 42;\n', /empty\.js exports no agents: export them made with defineAgent, as named exports or as the default export \(an array\)/],
    ['CommonJS that requires agentplane', 'broken/required.cjs', "const { defineAgent } = require('@agentplane/server');\nmodule.exports = [];\n", /required\.cjs is CommonJS.*import \{ defineAgent \} from '@agentplane\/server'/],
    // `agentplane` unscoped is another package on npm: the line names ours, and does not say to install that one.
    ['the unscoped name', 'broken/unscoped.js', "import { defineAgent } from 'agentplane';\nexport default [defineAgent];\n", /unscoped\.js imports agentplane, .*another package.*import \{ defineAgent \} from '@agentplane\/server'$/],
  ];

  let loaded: Promise<Map<string, { name?: string; message: string }>> | undefined;
  /** What test/fixtures/load-agents.ts printed for each module of FAILURES (run once). */
  const loadedInOneProcess = () =>
    (loaded ??= (async () => {
      writeFiles(Object.fromEntries(FAILURES.map(([, file, source]) => [file, source])));
      const proc = await startProcess({
        entry: 'test/fixtures/load-agents.ts',
        args: FAILURES.map(([, file]) => join(work, file)),
        env: { REDIS_URL: undefined },
        ready: 'spawned',
      });
      expect(await proc.exited).toBe(0);
      const lines = proc.lines.flatMap((line) => (line.json ? [line.json as { modulePath: string; name?: string; message: string }] : []));
      return new Map(lines.map((line) => [line.modulePath, line]));
    })());

  // Every module in one process that loads them one after the other, as the entry points do.
  it.each(FAILURES)('%s', async (_name, file, _source, pattern) => {
    const message = (await loadedInOneProcess()).get(join(work, file));
    expect(message?.name).toBe('AgentsModuleError');
    expect(message!.message.startsWith(join(work, file)), message!.message).toBe(true);
    expect(message!.message).not.toContain('\n');
    expect(message!.message).toMatch(pattern);
  }, 240_000);

  it.each([
    ['npm start', FAILURES[0]!, { entry: 'src/main/api.ts', plainNode: false }],
    ['the compiled entry', FAILURES[1]!, { entry: 'dist/src/main/api.js', plainNode: true }],
  ] as const)('%s: exit 1 and that line alone on stderr', async (_name, [, file, source, pattern], runner) => {
    writeFiles({ [file]: source });
    const proc = await startProcess({ ...runner, env: { REDIS_URL: undefined, AGENTS_MODULE: join(work, file) }, ready: 'spawned' });
    expect(await proc.exited).toBe(1);
    const errors = proc.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '').map((l) => l.text);
    expect(errors).toEqual([expect.stringMatching(pattern)]);
    expect(errors[0]!.startsWith(`Invalid configuration: AGENTS_MODULE: ${join(work, file)}`)).toBe(true);
  }, 240_000);
});
