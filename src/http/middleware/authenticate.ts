import { DEFAULT_TENANT, type Principal } from '../../domain/types.js';
import type { Authenticate } from '../router.js';

/** With SERVICE_AUTH=none every request runs as this principal, in DefaultTenant. */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  subject: 'anonymous',
  tenant: DEFAULT_TENANT,
  role: 'admin',
  kind: 'anonymous',
});

export const anonymous: Authenticate = async () => ANONYMOUS_PRINCIPAL;
