import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { UiBundles, UiFile } from '../ports/ui-bundles.js';
import { configError, readLangGraphJson } from './langgraph-json.js';

/*
 * The `ui` of a langgraph.json, built as LangGraph's server builds it: with
 * `@langchain/langgraph-ui` (LangGraph's own bundler, esbuild with its React externals and
 * Tailwind), which the project installs beside its graphs (an optional peer dependency of
 * agentplane, as `@langchain/langgraph` is). Built once when the API starts, into memory.
 */

interface LangGraphUi {
  build(options: { cwd: string; defs: Record<string, string>; config?: { shared?: string[] }; output: string }): Promise<void>;
}

/** The generative UI bundles of the `langgraph.json` at `configPath`; undefined when it has no `ui`. A fault is one ConfigError line. */
export async function buildUiBundles(configPath: string): Promise<UiBundles | undefined> {
  const json = readLangGraphJson(configPath);
  if (!json.ui) return undefined;
  const folder = dirname(json.path);
  let bundler: LangGraphUi;
  try {
    const entry = createRequire(json.path).resolve('@langchain/langgraph-ui');
    bundler = (await import(pathToFileURL(entry).href)) as LangGraphUi;
  } catch {
    throw configError(json.path, '"ui" is built with @langchain/langgraph-ui, which the project does not have: npm install @langchain/langgraph-ui');
  }
  const output = mkdtempSync(join(tmpdir(), 'agentplane-ui-'));
  const built = new Map<string, UiFile[]>();
  try {
    await bundler.build({ cwd: folder, defs: json.ui.defs, ...(json.ui.shared ? { config: { shared: json.ui.shared } } : {}), output });
    for (const name of Object.keys(json.ui.defs)) {
      const dir = join(output, 'public', name);
      built.set(
        name,
        readdirSync(dir).map((basename) => ({ basename, contents: new Uint8Array(readFileSync(join(dir, basename))) })),
      );
    }
  } catch (error) {
    throw configError(json.path, `"ui": the components did not build: ${String(error instanceof Error ? error.message : error).split('\n')[0]}`);
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
  return { files: (name) => built.get(name) };
}
