import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * `agentplane` on the npm registry is somebody else's package; ours is `@agentplane/server`
 * (its command is still `agentplane`). A command that a reader copies must not download and
 * run a registry package they did not install: `npx x` and `npm exec x` fetch `x` when it is
 * not in node_modules, so every one carries `--no-install` (`--no`), which fails instead; and
 * nothing installs or imports the unscoped name.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'test']);
const TEXT = /\.(md|ts|tsx|js|mjs|cjs|json|ya?ml|sh)$|(^|\/)Dockerfile$/;

/** The repository's text files (not node_modules, build output, tests or dot folders), relative to ROOT. */
function textFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name) ? [] : textFiles(path);
    const name = relative(ROOT, path);
    return TEXT.test(name) && name !== 'package-lock.json' ? [name] : [];
  });
}

/** Every Markdown file, and the sources' messages and comments, the Dockerfile, the chart, the scripts. */
const FILES = textFiles();

// `npx x`, `npm exec x`, `npm x x` without `--no-install`/`--no` first; the others always download.
const FETCHING_RUN = /\b(?:npx|npm\s+(?:exec|x))\b(?!\s+--no(?:-install)?\b)|\b(?:pnpm\s+dlx|yarn\s+dlx|bunx)\b/;
// `npm install agentplane` (any of its aliases, after options), `npx --package agentplane`.
const UNSCOPED_INSTALL = /\bnpm\s+(?:install|i|add)(?:\s+-[^\s`]+)*\s+agentplane(?:@[^\s`]*)?(?=[\s`;&|]|$)|(?:--package[=\s]|-p\s+)agentplane\b(?![/-])/;
// `from 'agentplane'`, `import('agentplane/client')`, `require('agentplane')`.
const UNSCOPED_IMPORT = /(?:\bfrom|\bimport\(|\brequire\()\s*['"]agentplane(?:\/[\w-]+)?['"]/;

/** `file:line: text` of each line of `files` that `pattern` matches. */
function linesMatching(files: readonly string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, index) => (pattern.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
  );
}

describe('commands and imports that could fetch somebody else\'s package', () => {
  it('reads the Markdown files of the repository and the sources', () => {
    for (const name of ['README.md', 'BENCHMARKS.md', 'docs/guides/scaling-and-production.md', 'examples/agents/README.md', 'examples/langgraph/README.md', 'src/cli/main.ts', 'Dockerfile']) {
      expect(FILES).toContain(name);
    }
  });

  it('recognises what it forbids, and what it allows', () => {
    expect(FETCHING_RUN.test('npx agentplane dev')).toBe(true);
    expect(FETCHING_RUN.test('`npx tsx bench/x.ts`')).toBe(true);
    expect(FETCHING_RUN.test('npm exec agentplane -- dev')).toBe(true);
    expect(FETCHING_RUN.test('pnpm dlx agentplane')).toBe(true);
    expect(FETCHING_RUN.test('npx --no-install agentplane dev')).toBe(false);
    expect(FETCHING_RUN.test('npm exec --no -- agentplane dev')).toBe(false);
    expect(FETCHING_RUN.test('npm run agentplane -- dev')).toBe(false);
    expect(UNSCOPED_INSTALL.test('next to it: `npm install agentplane`, then')).toBe(true);
    expect(UNSCOPED_INSTALL.test('npm i -D agentplane@0.1.0')).toBe(true);
    expect(UNSCOPED_INSTALL.test('npx --no-install --package agentplane agentplane')).toBe(true);
    expect(UNSCOPED_INSTALL.test('npm install @agentplane/server')).toBe(false);
    expect(UNSCOPED_INSTALL.test('run npm install in agentplane first')).toBe(false);
    expect(UNSCOPED_INSTALL.test('npm install /path/to/agentplane-server-0.1.0.tgz')).toBe(false);
    expect(UNSCOPED_IMPORT.test("import { defineAgent } from 'agentplane';")).toBe(true);
    expect(UNSCOPED_IMPORT.test("import { createClient } from 'agentplane/client';")).toBe(true);
    expect(UNSCOPED_IMPORT.test("import { defineAgent } from '@agentplane/server';")).toBe(false);
  });

  it('no documented npx or npm exec can download a package: each carries --no-install', () => {
    expect(linesMatching(FILES, FETCHING_RUN)).toEqual([]);
  });

  it('nothing installs the unscoped agentplane, which is not this package', () => {
    expect(linesMatching(FILES, UNSCOPED_INSTALL)).toEqual([]);
  });

  it('docs, examples and sources import the package as @agentplane/server', () => {
    expect(linesMatching(FILES, UNSCOPED_IMPORT)).toEqual([]);
  });

  it('the package is @agentplane/server, with the agentplane command and a script to run it from a clone', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; scripts: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { name: string; packages: Record<string, { name?: string }> };
    expect([pkg.name, lock.name, lock.packages['']?.name]).toEqual(['@agentplane/server', '@agentplane/server', '@agentplane/server']);
    expect(Object.keys(pkg.bin)).toEqual(['agentplane']);
    expect(pkg.scripts.agentplane).toBe('tsx src/cli/main.ts');
  });
});
