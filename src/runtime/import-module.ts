import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const TYPESCRIPT = /\.[cm]?tsx?$/;

/**
 * Imports a user module by path (relative paths against the working directory): `.js` and
 * `.mjs` with Node's own loader, `.ts` / `.mts` / `.cts` through tsx's scoped `tsImport`, so
 * the compiled entry points (plain `node dist/…`) load TypeScript agents too. tsx is loaded
 * only for such a module, and its hooks apply to that import alone.
 */
export async function importModule(modulePath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(isAbsolute(modulePath) ? modulePath : resolve(process.cwd(), modulePath)).href;
  if (!TYPESCRIPT.test(modulePath)) return (await import(url)) as Record<string, unknown>;
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}
