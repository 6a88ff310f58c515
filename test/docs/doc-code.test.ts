import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/app.js';
import { blocksOf, docPages, isCode, readmeAgentsModule, ROOT, runs, type Block } from './doc-pages.js';

/**
 * The TypeScript and JavaScript examples of the documentation: each block (not marked
 * `no-run`) is type-checked with the project's TypeScript against the sources, the package's
 * entry points (`@agentplane/server`, `/client`, `/integrations`) mapped to src/ as the built
 * package maps them to dist/. A `tsx` block (a React component) is checked as TypeScript with
 * its JSX elements unchecked (no React types here): the hooks' and the client's types are. A
 * block marked `run` is also run with tsx against a fresh embedded API
 * (`http://localhost:8420` in it pointing there) and must exit 0.
 */

const execFileAsync = promisify(execFile);
// Under node_modules: the blocks resolve the project's dependencies as a file of the clone does.
const DIR = join(ROOT, 'node_modules', '.cache', 'agentplane-doc-code');
const blocks = docPages()
  .flatMap((file) => {
    try {
      return blocksOf(file);
    } catch {
      return [];
    }
  })
  .filter((block) => isCode(block) && runs(block));
const EXTENSIONS: Record<string, string> = { js: 'js', javascript: 'js', mjs: 'js', jsx: 'jsx', tsx: 'tsx' };
const fileOf = (block: Block): string => `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_${block.line}.${EXTENSIONS[block.lang] ?? 'ts'}`;

beforeAll(() => {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, 'package.json'), JSON.stringify({ type: 'module' }));
  const src = (path: string) => [join(ROOT, 'src', path)];
  writeFileSync(
    join(DIR, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true,
        skipLibCheck: true, noEmit: true, allowJs: true, esModuleInterop: true, allowImportingTsExtensions: true, jsx: 'preserve',
        paths: { '@agentplane/server': src('index.ts'), '@agentplane/server/client': src('client/index.ts'), '@agentplane/server/integrations': src('integrations/index.ts') },
      },
      include: ['*.ts', '*.tsx', '*.js', '*.jsx'],
    }),
  );
  // Any element with any props: the examples' JSX is React's, whose types this project does not install.
  writeFileSync(join(DIR, 'jsx.d.ts'), 'declare namespace JSX { type Element = unknown; interface IntrinsicElements { [name: string]: Record<string, unknown> } }\n');
  // Each block is a module of its own, so that two blocks may use the same names.
  for (const block of blocks) writeFileSync(join(DIR, fileOf(block)), `${block.body}\nexport {};\n`);
});
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('the code examples of the documentation', () => {
  it('finds them: the typed client, the LangGraph SDK, the agents module, useStream in React', () => {
    console.log(`documentation code examples: ${blocks.length} type-checked, ${blocks.filter((b) => b.flags.includes('run')).length} run`);
    expect(blocks.map((block) => block.file)).toEqual(expect.arrayContaining(['docs/guides/typed-client.md', 'docs/guides/langgraph.md', 'docs/guides/agents.md']));
    expect(blocks.filter((block) => block.lang === 'tsx').map((block) => block.file)).toContain('docs/guides/langgraph.md');
  });

  it("README's agents.js is among them, and is what the packaging test runs from a fresh clone (test/packaging/fresh-clone.test.ts)", () => {
    const module = readmeAgentsModule();
    expect(blocks.some((block) => block.file === 'README.md' && `${block.body.replace(/^\/\/ agents\.js\n/, '')}\n` === module)).toBe(true);
    expect(module).toMatch(/^import \{ defineAgent \} from '@agentplane\/server';\n/);
  });

  it('type-checks every one against the sources', async () => {
    const result = await execFileAsync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', DIR], { cwd: ROOT }).catch((error: { stdout: string }) => error);
    const errors = result.stdout.trim();
    const where = (line: string) => {
      const block = blocks.find((b) => line.startsWith(fileOf(b)) || line.includes(`/${fileOf(b)}`));
      return block ? `${block.file}:${block.line} ${line}` : line;
    };
    // Only the blocks' own errors: the sources are the project's type check's business.
    expect(errors.split('\n').filter((line) => line.startsWith(DIR) || /^[A-Za-z0-9_]+\.(ts|js)\(/.test(line) || line.includes('agentplane-doc-code')).map(where)).toEqual([]);
  }, 180_000);

  describe('the ones marked run, against an embedded API', () => {
    let api: TestApi;
    // Outside node_modules, where tsx applies the tsconfig's paths.
    const runDir = mkdtempSync(join(tmpdir(), 'agentplane-doc-run-'));
    beforeAll(async () => {
      api = await startTestApi();
    });
    afterAll(async () => {
      await api?.close();
      rmSync(runDir, { recursive: true, force: true });
    });

    for (const block of blocks.filter((b) => b.flags.includes('run'))) {
      it(`${block.file}:${block.line} runs to its end`, async () => {
        const file = join(runDir, fileOf(block));
        writeFileSync(join(runDir, 'package.json'), JSON.stringify({ type: 'module' }));
        writeFileSync(file, `${block.body.replaceAll('http://localhost:8420', api.url)}\nexport {};\n`);
        const { stdout } = await execFileAsync(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), '--tsconfig', join(DIR, 'tsconfig.json'), file], {
          cwd: ROOT,
          timeout: 60_000,
        });
        expect(stdout).toMatch(/completed/);
      }, 90_000);
    }
  });
});
