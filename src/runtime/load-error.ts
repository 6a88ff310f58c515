import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATION_PARAM } from './agents-hooks.js';
import { agentsModuleFiles } from './import-module.js';

/**
 * An agents module that cannot be loaded or that exports no usable agents. The message is one
 * line: the module's path, what is wrong (with the file and line when the error has one), and
 * what to change.
 */
export class AgentsModuleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentsModuleError';
  }
}

const GENERATION = new RegExp(`\\?${GENERATION_PARAM}=\\d+`, 'g');

/** A path or file URL as a path, without the generation agents-hooks.ts gives it. */
function pathOf(location: string): string {
  const plain = location.replace(GENERATION, '');
  return plain.startsWith('file:') ? fileURLToPath(plain) : plain;
}

const firstLine = (text: string): string => text.split('\n')[0]!.trim();

/**
 * The one line that says why importing the agents module at `modulePath` failed, and the fix.
 * An error the module's code throws is named with the line of the module's file it came from.
 */
export function describeLoadError(modulePath: string, error: unknown): string {
  const err = error instanceof Error ? error : new Error(String(error));
  const message = err.message.replace(GENERATION, '');
  const code = (err as NodeJS.ErrnoException).code;
  // A newcomer from LangGraph's Python side names their graph file: say that Python is not served, not how to rename it.
  if (PYTHON.test(modulePath)) return pythonFile(modulePath);
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return notFound(modulePath, message, err);
  const syntax = syntaxErrorAt(err);
  if (syntax) return `${syntax.startsWith(`${modulePath}:`) ? '' : `${modulePath}: `}${syntax}; fix the syntax`;
  switch (code) {
    case 'ERR_UNKNOWN_FILE_EXTENSION':
      return `${modulePath} cannot be loaded: ${firstLine(message)}; name it .js, .mjs or .ts`;
    case 'ERR_UNSUPPORTED_DIR_IMPORT':
      return `${modulePath} cannot be loaded: ${firstLine(message)}; name the file, e.g. …/index.js`;
    default: {
      const at = userFrame(err);
      return `${modulePath} threw while loading: ${err.name}: ${firstLine(message)}${at ? ` (at ${at})` : ''}`;
    }
  }
}

const PYTHON = /\.py[iw]?$/i;

function pythonFile(modulePath: string): string {
  return (
    `${modulePath} is a Python file: agentplane serves agents written in JavaScript or TypeScript ` +
    "(a .js, .mjs or .ts module of defineAgent agents) and LangGraph.js graphs (SERVICE_LANGGRAPH_JSON), not Python; serve Python graphs with LangGraph's Python server (langgraph dev)"
  );
}

// "Cannot find package 'x' imported from /a/b.js", "Cannot find module '/a/c.js' imported from
// /a/b.js" (import), "Cannot find module 'x'\nRequire stack:\n- /a/b.cjs" (require).
const NOT_FOUND = /^Cannot find (?:package|module) '([^']+)'(?: imported from (.+))?$/m;

function notFound(modulePath: string, message: string, error: Error): string {
  const match = NOT_FOUND.exec(message);
  if (!match) return `${modulePath} cannot be loaded: ${firstLine(message)}`;
  const missing = pathOf(match[1]!);
  const stack = (error as { requireStack?: string[] }).requireStack;
  const importer = pathOf(match[2] ?? stack?.[0] ?? modulePath);
  const who = importer === modulePath ? modulePath : `${modulePath}: ${importer}`;
  // Imported, the package's own name resolves to the running package (agents-hooks.ts): only require() misses it.
  if (/^@agentplane\/server(\/|$)/.test(missing)) {
    return `${who} is CommonJS (require): @agentplane/server is an ES module; write import { defineAgent } from '@agentplane/server' in a .js or .mjs file`;
  }
  // Never advise installing `agentplane`: that name on npm is somebody else's package.
  if (/^agentplane(\/|$)/.test(missing)) {
    return `${who} imports agentplane, which is another package on npm: this one is @agentplane/server; write import { defineAgent } from '@agentplane/server'`;
  }
  if (missing.startsWith('/') || missing.startsWith('.')) return `${who} imports ${missing}, which does not exist; fix the import`;
  const name = missing.startsWith('@') ? missing.split('/').slice(0, 2).join('/') : missing.split('/')[0]!;
  return `${who} imports ${name}, which is not installed: run \`npm install ${name}\` in ${dirname(importer)}`;
}

// esbuild (tsx): "Transform failed with 1 error:\n/a/b.ts:2:44: ERROR: Expected …"
const TRANSFORM = /^(.+?:\d+:\d+): ERROR: (.+)$/m;
// V8: the stack of a SyntaxError starts with the file and line ("file:///a/b.js:2").
const V8_LOCATION = /^((?:file:\/\/|\/)\S+?:\d+)$/m;

function syntaxErrorAt(error: Error): string | undefined {
  const transform = error.name === 'TransformError' ? TRANSFORM.exec(error.message) : null;
  if (transform) return `${pathOf(transform[1]!)}: SyntaxError: ${transform[2]}`;
  if (!(error instanceof SyntaxError) && error.name !== 'SyntaxError') return undefined;
  const location = V8_LOCATION.exec(error.stack ?? '');
  const at = location ? pathOf(location[1]!) : misparsedFile();
  return `${at ? `${at}: ` : ''}SyntaxError: ${firstLine(error.message.replace(GENERATION, ''))}`;
}

/**
 * The file and line of the agents module's JavaScript that does not parse. V8 keeps the place
 * of an ES module's syntax error out of the error's stack (only an uncaught error prints it):
 * `node --check` finds it again, only when loading failed.
 */
function misparsedFile(): string | undefined {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const file of agentsModuleFiles()) {
    if (!/\.m?js$/.test(file)) continue;
    const checked = spawnSync(process.execPath, ['--input-type=module', '--check'], { input: readFileSync(file), env, encoding: 'utf8', timeout: 10_000 });
    const line = /^\[stdin\]:(\d+)$/m.exec(checked.stderr ?? '');
    if (checked.status !== 0 && line) return `${file}:${line[1]}`;
  }
  return undefined;
}

/** The first frame of the stack in a file of the agents module (not Node's, agentplane's or a package's). */
function userFrame(error: Error): string | undefined {
  const files = agentsModuleFiles();
  for (const frame of (error.stack ?? '').split('\n').slice(1)) {
    const match = /\(?((?:file:\/\/)?\/[^\s()]+):(\d+:\d+)\)?$/.exec(frame.trim());
    if (match && files.has(pathOf(match[1]!))) return `${pathOf(match[1]!)}:${match[2]}`;
  }
  return undefined;
}
