import { defineConfig } from 'vitest/config';
import base, { FAILOVER_TESTS } from './vitest.config.js';

/** `npm run test:failover`: a Redis Cluster master and a Sentinel master killed under load. */
export default defineConfig({
  test: { ...base.test, include: FAILOVER_TESTS, exclude: [] },
});
