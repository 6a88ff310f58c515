import { createRequire } from 'node:module';
import { extractTypedSchemas, type TypeScript } from './type-schemas-extract.js';

/*
 * The child process of src/langgraph/type-schemas.ts (arguments: the graph file and export):
 * reads one graph's types, sends `{ schemas }`, `{ unavailable }` (no TypeScript installed) or
 * `{ error }`, and exits.
 */

const [file = '', exportName = 'default'] = process.argv.slice(2);

/** The project's own TypeScript (beside the graph), else agentplane's when it has one. */
function loadTypeScript(): TypeScript | undefined {
  for (const from of [file, import.meta.url]) {
    try {
      return createRequire(from)('typescript') as TypeScript;
    } catch {
      // not there: the next place, or none
    }
  }
  return undefined;
}

function answer(): object {
  const ts = loadTypeScript();
  if (!ts) return { unavailable: true };
  try {
    return { schemas: extractTypedSchemas(ts, file, exportName) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

process.send!(answer(), () => process.disconnect());
