import type { Middleware } from 'koa';
import { AppError } from '../domain/errors.js';

/**
 * What a server answers when whoever reaches it may do anything (SERVICE_AUTH=none; the webhook
 * receiver with WEBHOOK_INSECURE): requests by the names of this machine, not by any name a DNS
 * record points here (DNS rebinding: a page of evil.example whose name later resolves to
 * 127.0.0.1 calls the server as same-origin), and not requests a page of another origin sends
 * blind (a text/plain POST needs no preflight; the server would run it even if the browser then
 * hides the answer).
 */

/** Host names always answered: this machine's. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** The Host names a server answers: `*` any, else these (lowercase, without port); undefined: not checked. */
export type AllowedHosts = '*' | readonly string[] | undefined;

/**
 * The names answered for SERVICE_ALLOWED_HOSTS (`configured`, as parsed) when authentication is
 * `off` or not: the loopback names and the configured ones; `*` any; nothing configured, any
 * name with authentication and loopback names only without.
 */
export function allowedHosts(configured: readonly string[], authOff: boolean): AllowedHosts {
  if (configured.includes('*')) return '*';
  if (configured.length === 0 && !authOff) return undefined;
  return [...new Set([...LOOPBACK_HOSTS, ...configured.map(normalise)])];
}

const normalise = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** The name of a Host header without its port, normalised; undefined when it is not a host name. */
function hostName(host: string): string | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]@/\s]+)(?::\d{1,5})?$/.exec(host);
  return match ? normalise(match[1]!) : undefined;
}

/** The options of {@link localGuard}. */
export interface LocalGuardOptions {
  hosts: AllowedHosts;
  /** Set: a request with an Origin that is neither the request's own nor one this accepts is refused. */
  origins?: (origin: string) => boolean;
  /** The settings named in a refusal, e.g. `SERVICE_ALLOWED_HOSTS`. */
  hostsVariable: string;
  originsVariable?: string;
}

/**
 * Refuses, with 403 `forbidden` before anything else runs (probes included: an orchestrator's
 * probe sends its own Host, which the deployment lists or sends as `localhost`), a request whose
 * Host is not answered or, with `origins`, whose Origin is foreign.
 */
export function localGuard(options: LocalGuardOptions): Middleware {
  const { hosts, origins } = options;
  return async (ctx, next) => {
    const host = ctx.get('Host');
    if (hosts !== undefined && hosts !== '*') {
      const name = hostName(host);
      if (name === undefined || !hosts.includes(name)) {
        throw new AppError('forbidden', `Host "${host}" is not answered here: without authentication only ${hosts.join(', ')} are (${options.hostsVariable}).`);
      }
    }
    const origin = ctx.get('Origin');
    if (origins && origin !== '' && !sameOrigin(origin, host) && !origins(origin)) {
      throw new AppError('forbidden', `Requests from pages of ${origin} are refused without authentication (${options.originsVariable ?? 'no origin is allowed'}).`);
    }
    await next();
  };
}

/** Whether a page of `origin` is served by the same host and port as the request (the server's own pages). */
function sameOrigin(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === new URL(`http://${host}`).host || new URL(origin).host === new URL(`https://${host}`).host;
  } catch {
    return false;
  }
}
