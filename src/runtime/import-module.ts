import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { GENERATION_PARAM, type AgentsHooksData } from './agents-hooks.js';

const TYPESCRIPT = /\.[cm]?tsx?$/;

/** The running agentplane: compiled (dist/src/…/*.js) or its sources under tsx (src/…/*.ts). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const ROOT = new URL(FROM_SOURCE ? '../../' : '../../../', import.meta.url);

/** A module loaded by {@link importAgentsModule}. */
export interface ImportedModule {
  /** The module's exports. */
  exports: Record<string, unknown>;
}

/** Whether tsx's hooks are in this process already (`tsx …`, `node --import tsx …`). */
let tsxIsLoaded = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /\btsx\b/.test(arg));
let hooksInstalled = false;
let generation = 0;
/** The files of the last import (the module and the files it imports, not packages); a failed one adds to the ones before. */
const files = new Set<string>();
const fileListeners = new Set<(file: string) => void>();

/**
 * Imports an agents module by path (relative paths against the working directory), each call
 * afresh: the module and the files it imports are loaded again, packages are not. `.js`,
 * `.mjs` and `.ts` (`.mts`, `.cts`, `.tsx`) load alike from the sources under tsx and from the
 * compiled package with plain node (tsx is registered then, once a TypeScript module is asked
 * for). `import … from '@agentplane/server'` in it resolves to this running package (agents-hooks.ts).
 */
export async function importAgentsModule(modulePath: string): Promise<ImportedModule> {
  const path = isAbsolute(modulePath) ? modulePath : resolve(process.cwd(), modulePath);
  await installHooks(TYPESCRIPT.test(path));
  generation += 1;
  const url = new URL(pathToFileURL(path).href);
  url.searchParams.set(GENERATION_PARAM, String(generation));
  const before = [...files];
  files.clear();
  addFile(path);
  try {
    return { exports: (await import(url.href)) as Record<string, unknown> };
  } catch (error) {
    // A fix to any file of the last good import, or of this one up to its failure, may mend it.
    for (const file of before) addFile(file);
    throw error;
  }
}

/** The files of the agents module, as the last import found them (see {@link importAgentsModule}). */
export function agentsModuleFiles(): ReadonlySet<string> {
  return files;
}

/**
 * Calls `listener` with each file the agents module imports, as the loader resolves it (the
 * loader thread reports them as messages, which may arrive after the import resolved).
 * Returns the function that stops it.
 */
export function onAgentsModuleFile(listener: (file: string) => void): () => void {
  fileListeners.add(listener);
  return () => fileListeners.delete(listener);
}

function addFile(file: string): void {
  if (files.has(file)) return;
  files.add(file);
  for (const listener of fileListeners) listener(file);
}

async function installHooks(typescript: boolean): Promise<void> {
  // tsx goes first, so that its hooks load agents-hooks.ts when agentplane runs from its
  // sources; ours, registered later, run before tsx's.
  if ((typescript || FROM_SOURCE) && !tsxIsLoaded) {
    const tsx = await import('tsx/esm/api');
    tsx.register();
    tsxIsLoaded = true;
  }
  if (hooksInstalled) return;
  hooksInstalled = true;
  const { port1, port2 } = new MessageChannel();
  port1.on('message', addFile);
  port1.unref();
  const data: AgentsHooksData = { entries: packageEntries(), own: ['src/', 'dist/'].map((dir) => new URL(dir, ROOT).href), port: port2 };
  register(new URL(`./agents-hooks${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url), { data, transferList: [port2] });
}

/**
 * The package's name (`@agentplane/server`) and its subpaths → the running package's entry
 * files, from its package.json's exports; under tsx the sources those files are compiled from.
 */
function packageEntries(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { name: string; exports: Record<string, string | { default: string }> };
  const entries: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    let file = typeof target === 'string' ? target : target.default;
    if (FROM_SOURCE) file = file.replace(/^\.\/dist\/(src\/.*)\.js$/, './$1.ts');
    entries[`${manifest.name}${subpath.slice(1)}`] = new URL(file, ROOT).href;
  }
  return entries;
}
