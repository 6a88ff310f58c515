import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

/**
 * `npm test`: every suite. The failover runs of test/cluster (a master killed under load) are
 * part of it; `npm run test:failover` (vitest.failover.config.ts) runs only them: see README, "Tests".
 */
export const FAILOVER_TESTS = ['test/cluster/failover.test.ts', 'test/cluster/sentinel.test.ts'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    // Three files at once on two cores: most of a file's time is spent waiting (for processes,
    // browsers, Redis restarts, cron's minute ticks). The whole suite took 898 s with three
    // against about 1,400 s with two, on the same 2-core machine.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default'],
  },
});
