import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';

export interface CallerCapsOptions {
  /** What is counted, for the 429 message: `open event streams`, `held waits`. */
  what: string;
  /** Most per caller on this replica; 0: no cap. */
  perPrincipal: number;
  /** The variable that sets `perPrincipal`, named in the 429 message. */
  perPrincipalVariable: string;
  /** Most per tenant on this replica; 0 or absent: no cap. */
  perTenant?: number;
  /** The variable that sets `perTenant`. */
  perTenantVariable?: string;
}

/**
 * Long-held requests (event streams, waits) per caller and per tenant on this replica, each
 * capped. `admit` throws 429 `rate_limited` over a cap, else counts the request and returns
 * the function that releases it (once, however often it is called). Without authentication
 * every caller is the same principal: client addresses are counted instead.
 */
export class CallerCaps {
  private readonly byPrincipal = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly options: CallerCapsOptions) {}

  admit(principal: Principal, address: string): () => void {
    const { what, perPrincipal, perTenant = 0 } = this.options;
    const caller = `${principal.tenant}\u0000${principal.kind === 'anonymous' ? `address:${address}` : `${principal.kind}:${principal.subject}`}`;
    const tenant = principal.tenant;
    if (perPrincipal > 0 && (this.byPrincipal.get(caller) ?? 0) >= perPrincipal) {
      throw new AppError('rate_limited', `This caller already has ${perPrincipal} ${what} on this replica (${this.options.perPrincipalVariable}); end one first.`, {
        headers: { 'Retry-After': '5' },
      });
    }
    if (perTenant > 0 && (this.byTenant.get(tenant) ?? 0) >= perTenant) {
      throw new AppError('rate_limited', `The tenant already has ${perTenant} ${what} on this replica (${this.options.perTenantVariable}).`, {
        headers: { 'Retry-After': '5' },
      });
    }
    change(this.byPrincipal, caller, 1);
    change(this.byTenant, tenant, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      change(this.byPrincipal, caller, -1);
      change(this.byTenant, tenant, -1);
    };
  }
}

function change(map: Map<string, number>, key: string, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
