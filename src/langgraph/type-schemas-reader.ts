import { createRequire } from 'node:module';
import { extractTypedSchemas, TooLargeError, type TypedGraphSchemas, type TypeScript } from './type-schemas-extract.js';

/*
 * The child process of src/langgraph/type-schemas.ts (arguments: the graph file, the export and
 * the largest answer in bytes): reads one graph's types, sends one {@link ReaderAnswer}, and
 * exits. Its heap and time are bounded by the parent.
 */

/** What the reader sends: `schemas`, `unavailable` (no TypeScript installed) or `error`; always its peak memory. */
export interface ReaderAnswer {
  schemas?: TypedGraphSchemas;
  unavailable?: true;
  error?: string;
  /** The error is a size bound: the types describe more than a schema may hold. */
  tooLarge?: true;
  /** `process.resourceUsage().maxRSS`: the reader's peak resident memory, KiB. */
  maxRssKiB: number;
}

const [file = '', exportName = 'default', maxBytesArg = ''] = process.argv.slice(2);
const maxBytes = Number(maxBytesArg) || Infinity;

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

function answer(): Omit<ReaderAnswer, 'maxRssKiB'> {
  const ts = loadTypeScript();
  if (!ts) return { unavailable: true };
  try {
    const schemas = extractTypedSchemas(ts, file, exportName);
    const bytes = Buffer.byteLength(JSON.stringify(schemas));
    if (bytes > maxBytes) return { error: `its schemas hold ${bytes} bytes of JSON, more than ${maxBytes}`, tooLarge: true };
    return { schemas };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error), ...(error instanceof TooLargeError ? { tooLarge: true as const } : {}) };
  }
}

const answered: ReaderAnswer = { ...answer(), maxRssKiB: process.resourceUsage().maxRSS };
process.send!(answered, () => process.disconnect());
