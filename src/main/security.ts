import { createAuthenticator } from '../auth/create-authenticator.js';
import { authOptionsFromConfig } from '../auth/options.js';
import { memoryLimiterFactory } from '../adapters/memory/limiter.js';
import { redisLimiterFactory } from '../adapters/redis/limiter.js';
import type { Config } from '../config.js';
import type { AppOptions } from '../http/app.js';
import { authenticateWith } from '../http/middleware/authenticate.js';
import { limitStages } from '../http/middleware/rate-limit.js';
import type { LimiterFactory } from '../ports/limiter.js';
import type { Backend } from './backend.js';

/** Limiters on the backend's Redis (shared by all replicas), or in memory in embedded mode. */
export function limiterFactoryFor(config: Config, backend: Pick<Backend, 'redis'>): LimiterFactory {
  return backend.redis ? redisLimiterFactory({ client: backend.redis, prefix: config.SERVICE_KEY_PREFIX }) : memoryLimiterFactory;
}

/**
 * Authentication, RBAC (applied by the router from `config`), the global rate limit and the
 * quotas of an API app. Throws ConfigError for a malformed auth setting: call it at start.
 */
export function securityOptions(
  config: Config,
  limiterFor: LimiterFactory,
): Pick<AppOptions, 'authenticate' | 'beforeAuth' | 'afterAuth'> {
  return {
    authenticate: authenticateWith(createAuthenticator(authOptionsFromConfig(config))),
    ...limitStages(config, limiterFor),
  };
}
