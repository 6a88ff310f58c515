import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `npm test`: every suite but the failover runs of test/cluster (a master killed under load),
 * which are `npm run test:failover` (vitest.failover.config.ts): see README, "Tests".
 */
export const FAILOVER_TESTS = ['test/cluster/failover.test.ts', 'test/cluster/sentinel.test.ts'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...FAILOVER_TESTS],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
