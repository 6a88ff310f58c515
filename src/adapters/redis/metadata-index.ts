import type { RedisContext } from './context.js';

/** Sessions put into the index per script call while a tenant's older sessions are walked. */
const INDEX_PAGE = 200;

/**
 * The sessions metadata index of each tenant (includes/sessionMetadata.lua keeps it with every
 * write): {@link ready} puts the sessions written before it existed into it, once per tenant
 * (a marker key says it is done; this process remembers it).
 */
export class SessionsMetadataIndex {
  /** Tenants whose sessions this process knows (or is making) to be in the index. */
  private readonly indexed = new Map<string, Promise<void>>();

  constructor(private readonly c: RedisContext) {}

  /** Resolves once every session of the tenant is in the index; a failed walk is tried again by the next call. */
  ready(tenant: string): Promise<void> {
    let done = this.indexed.get(tenant);
    if (!done) {
      done = this.walk(tenant);
      this.indexed.set(tenant, done);
      done.catch(() => this.indexed.delete(tenant));
    }
    return done;
  }

  private async walk(tenant: string): Promise<void> {
    const { keys } = this.c;
    const marker = keys.sessionsMetadataIndexed(tenant);
    if ((await this.c.redis.exists(marker)) === 1) return;
    let cursor = '';
    do {
      cursor = String(await this.c.script<string>('indexSessionsMetadata', [keys.sessions(tenant), marker], [keys.session(tenant, ''), cursor, INDEX_PAGE]));
    } while (cursor !== '');
  }
}
