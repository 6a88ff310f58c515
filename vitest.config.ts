import { configDefaults, defineConfig } from 'vitest/config';

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
    maxWorkers: 2,
    reporters: ['default'],
  },
});
