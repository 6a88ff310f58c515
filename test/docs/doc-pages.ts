import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blockSteps, type Step } from './readme-steps.js';

/**
 * The fenced blocks of the documentation (README.md, CONTRIBUTING.md and every page under
 * docs/), read as the examples test runs them. A block's info string is its language and then
 * flags: ```` ```sh ```` runs, ```` ```bash no-run ```` is shown only (a deployment, a second
 * machine, a platform's own API) and counted as such.
 *
 * - `sh`, `bash`, `shell`: each command is a step (see readme-steps.ts). curl commands run
 *   against the page's server, `npm run -s agentplane -- …` commands too (their output compared
 *   with the comment lines under them), and the page's `… npm start` command is the server
 *   itself: the variables before it are the server's settings. Anything else needs `no-run`.
 * - `ts`, `tsx`, `js`: type-checked (see doc-code.test.ts) unless `no-run`.
 * - `json`, `yaml`: parsed (see doc-data.test.ts) unless `no-run` (a part of a document, not a
 *   whole one). Blocks without a language are output or diagrams, not examples.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SHELL = new Set(['sh', 'bash', 'shell']);
const FENCE = /^(\s{0,3})(`{3,}|~{3,})\s*(.*)$/;

/** One fenced block of a page. */
export interface Block {
  file: string;
  /** Line of the first line inside the fence (1-based). */
  line: number;
  lang: string;
  /** Words after the language: `no-run`. */
  flags: string[];
  body: string;
  /** The `## ` section it is in ('' before the first). */
  section: string;
}

/** README.md, CONTRIBUTING.md and docs/**.md, relative to the repository, in reading order. */
export function docPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) => (entry.isDirectory() ? under(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : []));
  const docs = under('docs');
  const first = 'docs/getting-started.md';
  return ['README.md', 'CONTRIBUTING.md', ...docs.filter((page) => page === first), ...docs.filter((page) => page !== first)].map((page) =>
    relative(ROOT, join(ROOT, page)),
  );
}

/** The fenced blocks of `file`. */
export function blocksOf(file: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let open: { fence: string; indent: number; block: Block; lines: string[] } | undefined;
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const fence = FENCE.exec(text);
      if (open) {
        if (fence && fence[2]!.startsWith(open.fence) && fence[3]!.trim() === '') {
          open.block.body = open.lines.join('\n');
          blocks.push(open.block);
          open = undefined;
        } else open.lines.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)));
        return;
      }
      if (fence) {
        const [lang = '', ...flags] = fence[3]!.trim().split(/\s+/);
        open = { fence: fence[2]!, indent: fence[1]!.length, lines: [], block: { file, line: index + 2, lang: lang.toLowerCase(), flags, body: '', section } };
        return;
      }
      const heading = /^## (.+?)\s*$/.exec(text);
      if (heading) section = heading[1]!;
    });
  return blocks;
}

export const isShell = (block: Block): boolean => SHELL.has(block.lang);
export const isCode = (block: Block): boolean => ['ts', 'typescript', 'tsx', 'js', 'javascript', 'jsx', 'mjs'].includes(block.lang);
export const isData = (block: Block): boolean => ['json', 'yaml', 'yml'].includes(block.lang);
export const runs = (block: Block): boolean => !block.flags.includes('no-run');

/** The commands of a shell block, with the lines of its page. */
export function stepsOf(block: Block): Step[] {
  return blockSteps(block.body.split('\n'), block.line, block.section);
}

/** A CLI command run from a clone: `npm run -s agentplane -- …`. */
export const isCli = (command: string): boolean => /^npm run -s agentplane -- /.test(command);

/** `A=1 B='x y' npm start` (or `npm ci && npm start`): the variables it sets, or undefined when it is not a start. */
export function serverCommand(command: string): Record<string, string> | undefined {
  const match = /^((?:[A-Z_][A-Z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*)(?:npm ci && )?npm start$/.exec(command.trim());
  if (!match) return undefined;
  const env: Record<string, string> = {};
  for (const pair of match[1]!.matchAll(/([A-Z_][A-Z0-9_]*)=('[^']*'|"[^"]*"|\S*)/g)) env[pair[1]!] = pair[2]!.replace(/^(['"])(.*)\1$/, '$2');
  return env;
}

/**
 * README's agents.js, the module step 4 of its Quick start shows (the block whose first line is
 * `// agents.js`), as a reader saves it: the packaging test runs this text, not a copy of it.
 */
export function readmeAgentsModule(): string {
  const block = blocksOf('README.md').find((b) => isCode(b) && b.body.startsWith('// agents.js\n'));
  if (!block) throw new Error('README.md has no code block starting with `// agents.js`');
  return `${block.body.replace(/^\/\/ agents\.js\n/, '')}\n`;
}
