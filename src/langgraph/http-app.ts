import { ConfigError } from '../config.js';
import { importAgentsModule } from '../runtime/import-module.js';
import { describeLoadError } from '../runtime/load-error.js';
import type { HttpApp } from '../ports/http-app.js';
import { configError, readLangGraphJson } from './langgraph-json.js';

const isHttpApp = (value: unknown): value is HttpApp =>
  typeof value === 'object' && value !== null && typeof (value as HttpApp).fetch === 'function' && typeof (value as HttpApp).notFound === 'function';

/** The `http.app` of the `langgraph.json` at `configPath`, imported; undefined when it names none. A fault is one ConfigError line. */
export async function loadHttpApp(configPath: string): Promise<HttpApp | undefined> {
  const json = readLangGraphJson(configPath);
  const entry = json.httpApp;
  if (!entry) return undefined;
  const fail = (detail: string): ConfigError => configError(json.path, `"http.app" (${entry.spec}): ${detail}`);
  let exports: Record<string, unknown>;
  try {
    exports = (await importAgentsModule(entry.file)).exports;
  } catch (error) {
    throw fail(describeLoadError(entry.file, error));
  }
  const app = exports[entry.exportName];
  if (app === undefined) throw fail(`${entry.file} has no export "${entry.exportName}" (its exports: ${Object.keys(exports).join(', ') || 'none'})`);
  if (!isHttpApp(app)) throw fail(`the export "${entry.exportName}" is not a Hono app (no fetch() and notFound())`);
  return app;
}
