import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config.js';
import { readLangGraphJson } from './langgraph-json.js';

/*
 * Which LangGraph.js agentplane runs, checked before anything of @langchain/* is imported: an
 * unsupported copy would otherwise end the start with a missing-export stack (the saver imports
 * what @langchain/langgraph-checkpoint 1.2 exports) or load and run graphs that end with no
 * state. This file imports no @langchain/* package: it reads their package.json files.
 */

/** A range agentplane runs: `^major.minor.patch` (that version or a later one of the same major). */
export interface CaretRange {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/**
 * The supported versions (package.json's peerDependencies say the same): every LangGraph.js
 * 1.x, with the checkpoint package from 1.2.2 (its `writesSortKey`, `compareWritesSortKeys`
 * and `TASKS`; LangGraph.js 1.0's own dependency, `^1.0.0`, installs it) and @langchain/core
 * from 1.4.0 (checkpoint 1.2.2 imports `@langchain/core/utils/uuid`, which 1.0.1 lacks).
 */
export const SUPPORTED = Object.freeze({
  '@langchain/langgraph': Object.freeze({ major: 1, minor: 0, patch: 0 }),
  '@langchain/langgraph-checkpoint': Object.freeze({ major: 1, minor: 2, patch: 2 }),
  '@langchain/core': Object.freeze({ major: 1, minor: 4, patch: 0 }),
} satisfies Record<string, CaretRange>);

export type CheckedPackage = keyof typeof SUPPORTED;

export const rangeText = (range: CaretRange): string => `^${range.major}.${range.minor}.${range.patch}`;

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Whether `version` satisfies `range` as npm's caret does for a major of 1 or more: the same
 * major, not below the range's version; a prerelease (`1.0.0-alpha.1`) only of a later
 * version's core than the range's (npm admits none, but a prerelease installed by hand of a
 * later release is that release's code). An unparsable version does not satisfy it.
 */
export function satisfies(version: string, range: CaretRange): boolean {
  const match = VERSION.exec(version.trim());
  if (!match) return false;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (major !== range.major) return false;
  const order = minor !== range.minor ? minor - range.minor : patch - range.patch;
  return match[4] === undefined ? order >= 0 : order > 0;
}

/** One installed copy of a checked package: its version and folder. */
export interface InstalledPackage {
  name: CheckedPackage;
  version: string;
  dir: string;
  /** Who resolves it: the graphs (from their folder) or agentplane itself. */
  resolvedBy: 'graphs' | 'agentplane';
}

/**
 * The copy of `name` that a bare import resolves from `fromDir`: the first
 * `node_modules/<name>/package.json` on the way up, as Node looks for packages. Undefined when
 * there is none (the missing package is then said by the import's own error).
 */
export function installedFrom(fromDir: string, name: CheckedPackage, resolvedBy: InstalledPackage['resolvedBy']): InstalledPackage | undefined {
  let dir = resolve(fromDir);
  for (;;) {
    const manifest = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) {
      try {
        const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
        return { name, version: typeof version === 'string' ? version : 'unknown', dir: dirname(manifest), resolvedBy };
      } catch {
        return { name, version: 'unknown', dir: dirname(manifest), resolvedBy };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The one line that refuses `installed` when its version is outside what agentplane runs;
 * undefined when it is supported.
 */
export function unsupportedVersion(installed: InstalledPackage): string | undefined {
  const range = SUPPORTED[installed.name];
  if (satisfies(installed.version, range)) return undefined;
  const supported = (Object.keys(SUPPORTED) as CheckedPackage[]).map((name) => `${name} ${rangeText(SUPPORTED[name])}`);
  const fix = installed.name === '@langchain/langgraph' ? 'npm install @langchain/langgraph@^1 @langchain/core@^1' : `npm install ${installed.name}@${rangeText(range)}`;
  return (
    `${installed.name} ${installed.version} (${installed.dir}, the copy ${installed.resolvedBy === 'graphs' ? 'the graphs import' : 'agentplane imports'}) ` +
    `is not supported: agentplane runs ${supported[0]} with ${supported[1]} and ${supported[2]}; ${fix}`
  );
}

/** agentplane's own folder (the package's root, or this repository's), where its imports of @langchain/* resolve from. */
const OWN_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * Refuses, with a {@link ConfigError} of SERVICE_LANGGRAPH_JSON in one line, a LangGraph.js that
 * agentplane does not run: the @langchain/langgraph the graphs of the `langgraph.json` at
 * `configPath` resolve (from its folder and their files' folders), then agentplane's own
 * @langchain/langgraph, @langchain/langgraph-checkpoint (its saver's) and @langchain/core. A package that is
 * not installed is left to the import that needs it.
 */
export function checkLangGraphVersions(configPath: string, ownDir: string = OWN_DIR): void {
  const config = readLangGraphJson(configPath);
  const folders = [...new Set([dirname(config.path), ...config.graphs.map((graph) => dirname(graph.file))])];
  const seen = new Set<string>();
  const copies: (InstalledPackage | undefined)[] = [
    ...folders.map((folder) => installedFrom(folder, '@langchain/langgraph', 'graphs')),
    installedFrom(ownDir, '@langchain/langgraph', 'agentplane'),
    installedFrom(ownDir, '@langchain/langgraph-checkpoint', 'agentplane'),
    installedFrom(ownDir, '@langchain/core', 'agentplane'),
  ];
  for (const copy of copies) {
    if (!copy || seen.has(copy.dir)) continue;
    seen.add(copy.dir);
    const refusal = unsupportedVersion(copy);
    if (refusal) throw new ConfigError('SERVICE_LANGGRAPH_JSON', refusal);
  }
}
