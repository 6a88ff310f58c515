import { AppError } from '../../domain/errors.js';

/**
 * True for the ways a command fails while Redis cannot serve it: connection refused, reset or
 * closed, retries per request exhausted, the command timeout passed (a stalled server), Redis
 * full (`maxmemory` reached under `noeviction`), and a failover in progress: a cluster whose
 * slots are not all served, redirections that do not settle, a master demoted to replica or a
 * replica still loading.
 */
export function isConnectionFailure(error: unknown): boolean {
  const e = error as { name?: string; message?: string; code?: string } | null;
  if (!e || typeof e !== 'object') return false;
  return (
    e.name === 'MaxRetriesPerRequestError' ||
    e.code === 'ECONNREFUSED' ||
    /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|Command timed out|OOM command not allowed/.test(e.message ?? '') ||
    /^(CLUSTERDOWN|TRYAGAIN|READONLY|LOADING|MASTERDOWN)\b|Too many Cluster redirections|None of startup nodes is available|Failed to refresh slots cache|Cluster is ended/.test(e.message ?? '')
  );
}

/** The port's error for a Redis failure: `unavailable` (503, retry shortly) when Redis is unreachable. */
export function toPortError(error: unknown): unknown {
  if (error instanceof AppError || !isConnectionFailure(error)) return error;
  return new AppError('unavailable', 'Storage is unreachable; retry shortly.', { cause: error, headers: { 'Retry-After': '1' } });
}

/**
 * Wraps an adapter so every method that returns a promise rejects with {@link toPortError}'s
 * error: callers above the adapters see AppError `unavailable`, never an ioredis failure.
 * Methods are bound once, so the wrapper costs one closure call per method call.
 */
export function mapFailures<T extends object>(adapter: T): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(adapter, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'constructor') return value;
      let fn = wrapped.get(property);
      if (!fn) {
        const method = value as (...args: unknown[]) => unknown;
        fn = (...args: unknown[]) => {
          const result = method.apply(target, args);
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw toPortError(error);
              })
            : result;
        };
        wrapped.set(property, fn);
      }
      return fn;
    },
  });
}
