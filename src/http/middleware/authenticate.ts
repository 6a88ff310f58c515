import { ANONYMOUS_PRINCIPAL, anonymousAuthenticator, type Authenticator } from '../../auth/authenticator.js';
import type { Context } from 'koa';
import type { Principal } from '../../domain/types.js';

/** Resolves the caller of a request; throws AppError `unauthorized` for a bad credential. */
export type Authenticate = (ctx: Context) => Promise<Principal>;

/** With SERVICE_AUTH=none every request runs as this principal, in DefaultTenant. */
export { ANONYMOUS_PRINCIPAL };

/**
 * The router's authentication stage for an authenticator: the caller from the request headers,
 * or AppError `unauthorized` carrying the scheme's `WWW-Authenticate` challenge.
 */
export function authenticateWith(authenticator: Authenticator): Authenticate {
  return (ctx) => authenticator.authenticate(ctx.headers);
}

/** The stage of SERVICE_AUTH=none. */
export const anonymous: Authenticate = authenticateWith(anonymousAuthenticator);
