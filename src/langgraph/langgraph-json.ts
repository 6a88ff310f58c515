import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../config.js';
import { ID_PATTERN } from '../domain/types.js';

/** One graph of a `langgraph.json`. */
export interface GraphEntry {
  /** The graph id: the agent id. */
  id: string;
  /** As written: `./path/file.ts:exportName`. */
  spec: string;
  /** The graph file, absolute (relative paths are against the folder of `langgraph.json`). */
  file: string;
  /** The export of that file that is, or makes, the graph. */
  exportName: string;
  /** The `description` of an entry written as `{ "path": …, "description": … }`. */
  description?: string;
  /**
   * agentplane's extension of such an entry, `"agentplane": { "max_concurrency": n }`: most runs
   * of the graph running at once (SERVICE_AGENT_MAX_RUNNING overrides it).
   */
  maxConcurrency?: number;
}

/** What agentplane reads of a `langgraph.json`; other fields (`node_version`, `dependencies`, …) are `langgraph dev`'s. */
export interface LangGraphJson {
  /** The file, absolute. */
  path: string;
  graphs: GraphEntry[];
  /** Its `env`: the variables of the .env file it names, or the object it holds. */
  env: Record<string, string>;
  /**
   * The .env file `env` names when it does not exist (absolute): `env` is then empty, and the
   * loader warns, as LangGraph's CLI goes on without it (the templates ship `.env.example` only).
   */
  missingEnvFile?: string;
  /** Its `http.app`: a Hono app mounted in front of the API (src/http/custom-app.ts). */
  httpApp?: { spec: string; file: string; exportName: string };
  /** Its `ui`: generative UI components by name (paths relative to the file's folder), and `ui_config` (src/langgraph/ui-bundles.ts). */
  ui?: { defs: Record<string, string>; shared?: string[] };
}

/** A one-line error about the `langgraph.json` at `path` (SERVICE_LANGGRAPH_JSON). */
export const configError = (path: string, detail: string): ConfigError => new ConfigError('SERVICE_LANGGRAPH_JSON', `${path}: ${detail}`);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads and checks a `langgraph.json` (the file `langgraph dev` reads): `graphs` maps a graph
 * id to `"./path/file.ts:exportName"` (or `{ "path": …, "description": … }`), paths relative to
 * the file's folder; `env` is a .env file path relative to it (one that does not exist is
 * {@link LangGraphJson.missingEnvFile}), or an object of strings. Each
 * fault is a {@link ConfigError} of SERVICE_LANGGRAPH_JSON, one line naming the file and the fix.
 */
export function readLangGraphJson(configPath: string): LangGraphJson {
  const path = resolve(configPath);
  if (!existsSync(path)) throw new ConfigError('SERVICE_LANGGRAPH_JSON', `no file at ${path}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw configError(path, `not valid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!isObject(json) || !isObject(json.graphs)) {
    throw configError(path, 'no "graphs" object: write { "graphs": { "<id>": "./file.ts:exportName" } }');
  }
  const folder = dirname(path);
  const graphs = Object.entries(json.graphs).map(([id, entry]) => graphEntry(path, folder, id, entry));
  const httpApp = httpAppOf(path, folder, json.http);
  const ui = uiOf(path, json.ui, json.ui_config);
  return { path, graphs, ...envOf(path, folder, json.env), ...(httpApp ? { httpApp } : {}), ...(ui ? { ui } : {}) };
}

function uiOf(path: string, ui: unknown, uiConfig: unknown): LangGraphJson['ui'] {
  if (ui === undefined || ui === null) return undefined;
  if (!isObject(ui)) throw configError(path, '"ui" is not an object of component names and file paths');
  const wrong = Object.entries(ui).find(([name, file]) => typeof file !== 'string' || !ID_PATTERN.test(name));
  if (wrong) throw configError(path, `"ui": "${wrong[0]}" needs a name of 1 to 128 letters, digits, ".", "_", ":" or "-" and a file path`);
  if (Object.keys(ui).length === 0) return undefined;
  const shared = isObject(uiConfig) ? uiConfig.shared : undefined;
  if (shared !== undefined && !(Array.isArray(shared) && shared.every((s) => typeof s === 'string'))) throw configError(path, '"ui_config.shared" is not an array of package names');
  return { defs: ui as Record<string, string>, ...(shared ? { shared: shared as string[] } : {}) };
}

function httpAppOf(path: string, folder: string, http: unknown): LangGraphJson['httpApp'] {
  if (!isObject(http) || http.app === undefined || http.app === null) return undefined;
  const spec = http.app;
  const at = typeof spec === 'string' ? spec.lastIndexOf(':') : -1;
  if (typeof spec !== 'string' || at === 0 || at === spec.length - 1) throw configError(path, `"http.app": ${JSON.stringify(spec)} is not of the form "./path/file.ts:exportName"`);
  return at < 0 ? { spec, file: resolve(folder, spec), exportName: 'default' } : { spec, file: resolve(folder, spec.slice(0, at)), exportName: spec.slice(at + 1) };
}

function graphEntry(path: string, folder: string, id: string, entry: unknown): GraphEntry {
  if (!ID_PATTERN.test(id)) throw configError(path, `the graph id "${id}" is not a valid id: 1 to 128 letters, digits, ".", "_", ":" or "-"`);
  const spec = isObject(entry) ? entry.path : entry;
  const description = isObject(entry) && typeof entry.description === 'string' ? entry.description : undefined;
  const at = typeof spec === 'string' ? spec.lastIndexOf(':') : -1;
  if (typeof spec !== 'string' || at < 1 || at === spec.length - 1) {
    throw configError(path, `graph "${id}": ${JSON.stringify(spec ?? null)} is not of the form "./path/file.ts:exportName"`);
  }
  const file = resolve(folder, spec.slice(0, at));
  // `langgraph dev` serves Python graphs too: say so rather than fail to import the file as JavaScript.
  if (/\.py$/i.test(file)) {
    throw configError(path, `graph "${id}" (${spec}) is a Python graph (${file}): agentplane serves LangGraph.js graphs only (a .ts, .mts, .js or .mjs file); serve Python graphs with LangGraph's Python server (langgraph dev)`);
  }
  const maxConcurrency = maxConcurrencyOf(path, id, isObject(entry) ? entry.agentplane : undefined);
  return { id, spec, file, exportName: spec.slice(at + 1), description, ...(maxConcurrency === undefined ? {} : { maxConcurrency }) };
}

/** `"agentplane": { "max_concurrency": n }` of a graph's entry: n a positive integer. */
function maxConcurrencyOf(path: string, id: string, extension: unknown): number | undefined {
  if (extension === undefined) return undefined;
  const cap = isObject(extension) ? extension.max_concurrency : undefined;
  if (!isObject(extension) || (cap !== undefined && !(Number.isInteger(cap) && (cap as number) >= 1))) {
    throw configError(path, `graph "${id}": "agentplane" is not of the form { "max_concurrency": <a positive integer> }`);
  }
  return cap as number | undefined;
}

function envOf(path: string, folder: string, env: unknown): Pick<LangGraphJson, 'env' | 'missingEnvFile'> {
  if (env === undefined) return { env: {} };
  if (typeof env === 'string') {
    const file = resolve(folder, env);
    if (!existsSync(file)) return { env: {}, missingEnvFile: file };
    return { env: parseEnv(readFileSync(file, 'utf8')) as Record<string, string> };
  }
  if (isObject(env)) {
    const wrong = Object.entries(env).find(([, value]) => typeof value !== 'string');
    if (wrong) throw configError(path, `"env": the value of ${wrong[0]} is not a string`);
    return { env: env as Record<string, string> };
  }
  throw configError(path, '"env" is neither the path of a .env file nor an object of strings');
}

/** Sets each variable of `env` in `process.env` unless it is set already (the environment wins, as with `langgraph dev`). */
export function applyEnv(env: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(env)) {
    if (process.env[name] === undefined) process.env[name] = value;
  }
}
