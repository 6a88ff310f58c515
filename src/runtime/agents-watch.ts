import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { agentsModuleFiles, onAgentsModuleFile } from './import-module.js';
import { AgentsModuleError } from './load-error.js';
import { loadAgentsModule, type AgentRegistry } from './registry.js';
import { isGraphAgent } from './agent.js';

export interface AgentsWatchOptions {
  /** The agents module (AGENTS_MODULE), loaded into `registry` already. */
  modulePath: string;
  registry: AgentRegistry;
  logger: Logger;
  /** Quiet time after a change before the reload: an editor's save is several writes. @defaultValue 100 */
  debounceMs?: number;
}

/** A running watch; `close()` stops it (safe to call twice). */
export interface AgentsWatch {
  close(): void;
}

/**
 * `dev --watch`: reloads the agents module into `registry` when one of its files (the module
 * and the files it imports, not packages) changes, in this process, so that the in-memory
 * sessions stay. One `info` line per reload, one `error` line per reload that failed (the old
 * agents keep serving). A change event without a change of content (an editor touching a
 * file) reloads nothing.
 */
export function watchAgents(options: AgentsWatchOptions): AgentsWatch {
  const { modulePath, registry, logger } = options;
  const watchers = new Map<string, FSWatcher>();
  let contents = snapshot();
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const watchDirectoryOf = (file: string): void => {
    const dir = dirname(file);
    if (closed || watchers.has(dir)) return;
    // The directory, not the file: editors save by writing a new file over the old one.
    const watcher = watch(dir, (_event, name) => {
      if (name && agentsModuleFiles().has(`${dir}/${basename(name)}`)) schedule();
    });
    watcher.on('error', (error) => logger.warn({ err: error, dir }, 'watching a directory of the agents module failed'));
    watchers.set(dir, watcher);
  };

  function schedule(): void {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (reloading) again = true;
      else reloading = reload().finally(() => (reloading = undefined));
    }, options.debounceMs ?? 100);
  }

  async function reload(): Promise<void> {
    do {
      again = false;
      if (!changed()) continue;
      try {
        const agents = await loadAgentsModule(modulePath);
        // The graphs of SERVICE_LANGGRAPH_JSON stay as they were loaded at start.
        registry.replace([...agents, ...registry.list().filter(isGraphAgent)]);
        logger.info({ module: modulePath, agents: agents.map((agent) => agent.id) }, 'agents reloaded');
      } catch (error) {
        const message = error instanceof AgentsModuleError ? error.message : `${modulePath}: ${(error as Error).message}`;
        logger.error({ module: modulePath, error: message }, 'agents reload failed');
      }
      contents = snapshot();
      for (const file of agentsModuleFiles()) watchDirectoryOf(file);
    } while (again && !closed);
  }

  function changed(): boolean {
    const now = snapshot();
    return [...new Set([...now.keys(), ...contents.keys()])].some((file) => now.get(file) !== contents.get(file));
  }

  const stopListening = onAgentsModuleFile(watchDirectoryOf);
  for (const file of agentsModuleFiles()) watchDirectoryOf(file);
  logger.info({ module: modulePath, files: agentsModuleFiles().size }, 'watching the agents module');

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      stopListening();
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** A digest of each file of the agents module (undefined for one that is gone). */
function snapshot(): Map<string, string | undefined> {
  const digests = new Map<string, string | undefined>();
  for (const file of agentsModuleFiles()) {
    try {
      digests.set(file, createHash('sha1').update(readFileSync(file)).digest('hex'));
    } catch {
      digests.set(file, undefined);
    }
  }
  return digests;
}
