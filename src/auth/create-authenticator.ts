import { anonymousAuthenticator, type Authenticator } from './authenticator.js';
import { createApiKeyAuthenticator } from './api-keys.js';
import { createJwtAuthenticator } from './jwt.js';
import type { AuthOptions } from './options.js';

/**
 * The authenticator for the configured mode. Throws ConfigError (naming the variable) for any
 * malformed setting, so the entry points fail at start rather than on the first request.
 */
export function createAuthenticator(options: AuthOptions): Authenticator {
  switch (options.mode) {
    case 'none':
      return anonymousAuthenticator;
    case 'jwt':
      return createJwtAuthenticator(options.jwt ?? {});
    case 'apikey':
      return createApiKeyAuthenticator(options.apiKeys ?? [], options.apiKeyHeader);
  }
}
