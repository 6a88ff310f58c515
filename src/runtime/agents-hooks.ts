import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';

/*
 * Node module hooks (`module.register`) for agents modules. They run on Node's loader thread,
 * so this file imports nothing of agentplane's own. Three jobs:
 * - `@agentplane/server` and `@agentplane/server/…` resolve to the running package's own entry files, from
 *   wherever the importing module lives: an agents module needs no node_modules of its own,
 *   and there is one copy of the runtime, whose `defineAgent` objects the registry knows.
 * - The agents module's files (the module named by AGENTS_MODULE and the files it imports,
 *   not packages) carry a generation in their URLs (`?agentplane-agents=N`): importing a new
 *   generation loads them afresh, which is how `--watch` reloads. Each is reported to the
 *   main thread, which watches them.
 * - Such a file that uses import/export is an ES module even where its package.json says
 *   "type": "commonjs" (what `npm init -y` writes) or says nothing; and the file named is the
 *   file loaded (no `.js` → `.ts` substitution for it).
 */

/** The query parameter that marks the agents module's files with their generation. */
export const GENERATION_PARAM = 'agentplane-agents';

/** What the hooks are initialised with (`module.register`'s `data`). */
export interface AgentsHooksData {
  /** Specifier (`@agentplane/server`, `@agentplane/server/client`, …) → file URL of the running package's entry. */
  entries: Record<string, string>;
  /** Directories (file URLs ending in `/`) of the running package whose files are never the agents module's. */
  own: string[];
  /** Receives the path of each file of an agents module as it is resolved. */
  port: MessagePort;
}

interface ResolveContext {
  parentURL?: string;
  conditions?: string[];
}
interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context?: ResolveContext) => Promise<Resolved>;

let settings: AgentsHooksData | undefined;

/** Node calls this once with `data`. */
export function initialize(data: AgentsHooksData): void {
  settings = data;
}

/** Node's `resolve` hook. */
export async function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<Resolved> {
  if (!settings) return nextResolve(specifier, context);
  const entry = settings.entries[specifier];
  if (entry) return { url: entry, format: 'module', shortCircuit: true };
  // The module AGENTS_MODULE names, imported by URL with its generation: that very file.
  if (generationOf(specifier) !== undefined) return { url: reported(specifier), format: formatOf(specifier, undefined), shortCircuit: true };
  const generation = context.parentURL ? generationOf(context.parentURL) : undefined;
  const resolved = await nextResolve(specifier, context);
  if (generation === undefined || !isAgentsFile(resolved.url, settings.own)) return resolved;
  const url = withGeneration(resolved.url, generation);
  return { ...resolved, url: reported(url), format: formatOf(url, resolved.format) };
}

interface LoadContext {
  format?: string | null;
}
interface Loaded {
  format?: string | null;
  source?: string | ArrayBuffer | Uint8Array | null;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context?: LoadContext) => Promise<Loaded>;

/**
 * Node's `load` hook: an agents module's JavaScript ES modules are read as they are, past any
 * loader before (tsx's would transform them, and report a syntax error without its place).
 */
export async function load(url: string, context: LoadContext, nextLoad: NextLoad): Promise<Loaded> {
  const plain = context.format === 'module' && generationOf(url) !== undefined && /\.m?js$/.test(new URL(url).pathname);
  if (!plain) return nextLoad(url, context);
  return { format: 'module', source: readFileSync(fileURLToPath(url), 'utf8'), shortCircuit: true };
}

function generationOf(url: string): string | undefined {
  if (!url.startsWith('file:')) return undefined;
  return new URL(url).searchParams.get(GENERATION_PARAM) ?? undefined;
}

function withGeneration(url: string, generation: string): string {
  const tagged = new URL(url);
  tagged.searchParams.set(GENERATION_PARAM, generation);
  return tagged.href;
}

/** A file of the user's, not a package (node_modules) nor agentplane's own code. */
function isAgentsFile(url: string, own: readonly string[]): boolean {
  return url.startsWith('file:') && !url.includes('/node_modules/') && !own.some((dir) => url.startsWith(dir));
}

function reported(url: string): string {
  settings?.port.postMessage(fileURLToPath(url));
  return url;
}

const SCRIPT = new Set(['.js', '.jsx', '.ts', '.tsx']);

/**
 * The format to load a file of the agents module as: an ES module when its package says so or
 * when it has import/export statements (whatever its package.json says), else what the
 * resolver found (CommonJS, or by extension: `.mjs`/`.mts` modules, `.cjs`/`.cts` CommonJS).
 */
function formatOf(url: string, found: string | null | undefined): string | undefined {
  const path = fileURLToPath(url);
  const extension = extname(path);
  if (extension === '.mjs' || extension === '.mts') return 'module';
  if (extension === '.cjs' || extension === '.cts') return 'commonjs';
  if (!SCRIPT.has(extension)) return found ?? undefined;
  if (found === 'module' || packageType(dirname(path)) === 'module') return 'module';
  return hasModuleSyntax(path) ? 'module' : 'commonjs';
}

/** The "type" of the nearest package.json above `dir`. */
function packageType(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const file = join(current, 'package.json');
    if (existsSync(file)) {
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as { type?: string }).type;
      } catch {
        return undefined;
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

// A line that starts with an import or export statement; not `import(` (dynamic, valid in
// CommonJS), nor TypeScript's CommonJS forms `import x = require(…)` and `export =`.
const MODULE_SYNTAX = /^[ \t]*(?:import[ \t]*(?:["'{*]|[\w$]+[ \t]*(?:,|from\b))|import[ \t]+type\b|export[ \t]*(?:[{*]|default\b|(?:const|let|var|function|async|class|type|interface|enum)\b))/m;

function hasModuleSyntax(path: string): boolean {
  try {
    return MODULE_SYNTAX.test(readFileSync(path, 'utf8'));
  } catch {
    return false;
  }
}
