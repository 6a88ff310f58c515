import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TypedGraphSchemas } from './type-schemas-extract.js';

export type { TypedGraphSchemas, TypedSchemas } from './type-schemas-extract.js';

/*
 * A graph's schemas from its TypeScript types (type-schemas-extract.ts), read in a child
 * process so that the seconds a TypeScript program takes to build (and its memory) never hold
 * the API's event loop; once per graph file and export for the life of the process (a failure
 * is not kept: the next request tries again). No TypeScript installed, a timeout or an error:
 * undefined, and the caller describes the graph from what it holds at run time. A process, not
 * a worker thread: from the sources the reader is TypeScript itself, which tsx loads in a
 * process but Node 20 does not let it load in a worker.
 */

/** How long one reading may take before its process is stopped. */
export const TYPE_SCHEMAS_TIMEOUT_MS = 30_000;

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const cache = new Map<string, Promise<TypedGraphSchemas | undefined>>();

/** The schemas of the graph exported as `exportName` from `file` (absolute); undefined when its types cannot be read. */
export function typedSchemasOf(file: string, exportName: string, timeoutMs = TYPE_SCHEMAS_TIMEOUT_MS): Promise<TypedGraphSchemas | undefined> {
  const key = `${file}\0${exportName}`;
  let reading = cache.get(key);
  if (!reading) {
    reading = read(file, exportName, timeoutMs);
    cache.set(key, reading);
    void reading.then((schemas) => schemas ?? cache.delete(key));
  }
  return reading;
}

function read(file: string, exportName: string, timeoutMs: number): Promise<TypedGraphSchemas | undefined> {
  return new Promise((resolve) => {
    const reader = fileURLToPath(new URL(`./type-schemas-reader.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url));
    const execArgv = FROM_SOURCE ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
    const child = fork(reader, [file, exportName], { execArgv, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' });
    let settled = false;
    const done = (schemas: TypedGraphSchemas | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      resolve(schemas);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    child.once('message', (message: { schemas?: TypedGraphSchemas }) => done(message.schemas));
    child.once('error', () => done(undefined));
    child.once('exit', () => done(undefined));
  });
}
