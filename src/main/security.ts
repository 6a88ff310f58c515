import { createAuthenticator } from '../auth/create-authenticator.js';
import { authOptionsFromConfig } from '../auth/options.js';
import type { Config } from '../config.js';
import type { AppOptions } from '../http/app.js';
import { authenticateWith } from '../http/middleware/authenticate.js';
import { limitStages } from '../http/middleware/rate-limit.js';
import type { LimiterFactory } from '../ports/limiter.js';

/**
 * Authentication, RBAC (applied by the router from `config`), the global rate limit and the
 * quotas of an API app, counted by `limiters` (the backend's: shared by all replicas on Redis).
 * Throws ConfigError for a malformed auth setting: call it at start.
 */
export function securityOptions(config: Config, limiters: LimiterFactory): Pick<AppOptions, 'authenticate' | 'beforeAuth' | 'afterAuth'> {
  return {
    authenticate: authenticateWith(createAuthenticator(authOptionsFromConfig(config))),
    ...limitStages(config, limiters),
  };
}
