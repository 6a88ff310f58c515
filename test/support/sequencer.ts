import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, mostly waiting (for cron's minute ticks, browsers, processes
 * killed and restarted): started first, each overlaps the many short files instead of running
 * alone at the end. Vitest orders by the durations of its last run when it has them; a fresh
 * clone (as CI runs the suite) has none, and its fallback, the largest file first, would start
 * the longest one of all (the OpenAPI fuzz, a small file) among the last.
 */
export const LONGEST_FILES = [
  'test/schedules/workers.test.ts',
  'test/langgraph-api/crons.test.ts',
  'test/fuzz/openapi-fuzz.test.ts',
  'test/packaging/agents-module.test.ts',
  'test/chaos/chaos.test.ts',
  'test/e2e/langgraph-chat-page.test.ts',
  'test/e2e/cluster/cluster.test.ts',
  'test/docs/doc-code.test.ts',
];

/** `files` (paths relative to the root) with {@link LONGEST_FILES} first, in their order; the rest keep theirs. */
export function longestFirst<T>(files: readonly T[], path: (file: T) => string): T[] {
  const rank = (file: T) => {
    const at = LONGEST_FILES.indexOf(path(file));
    return at === -1 ? LONGEST_FILES.length : at;
  };
  return files
    .map((file, index) => ({ file, index }))
    .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
    .map(({ file }) => file);
}

/** Vitest's order ({@link BaseSequencer}), the longest files moved to the front. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return longestFirst(sorted, (file) => relative(this.ctx.config.root, file.moduleId).split('\\').join('/'));
  }
}
