import { startTestApi, type TestApi } from '../support/app.js';
import { uniquePrefix } from '../support/redis.js';

export type SecuredApi = TestApi;

export interface SecuredApiOptions {
  /** Collects every raw log line (the secret-leak assertions read it). */
  logs?: string[];
}

/**
 * An API app in this process, assembled exactly as `runApi` assembles it (the real
 * authenticator, RBAC and limit stages from the env), on a free loopback port. Without
 * `REDIS_URL` in `env` it runs on the in-memory backend. Logs at trace level into `logs`.
 */
export function startSecuredApi(env: Record<string, string>, options: SecuredApiOptions = {}): Promise<SecuredApi> {
  return startTestApi({
    env: { SERVICE_KEY_PREFIX: uniquePrefix('auth'), LOG_LEVEL: 'trace', ...env },
    secured: true,
    ...(options.logs ? { rawLogs: options.logs } : {}),
  });
}

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined (empty, not JSON, or a stream that was cut). */
  body: unknown;
}

/**
 * One request; an event stream is cut as soon as its headers arrive, so every route can be
 * called the same way.
 */
export async function send(url: string, init: { method?: string; headers?: Record<string, string>; json?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.json !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, body: undefined };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body };
}

/**
 * Fails when any captured log line contains one of the secrets (keys, JWT secret, whole
 * tokens, Authorization values). Also fails when nothing was captured, so it cannot pass vacuously.
 */
export function expectNoSecretsIn(lines: readonly string[], secrets: readonly string[]): void {
  if (lines.length === 0) throw new Error('no log lines were captured');
  const leaks = secrets.flatMap((secret) => lines.filter((line) => line.includes(secret)).map((line) => ({ secret, line })));
  if (leaks.length > 0) throw new Error(`secrets in ${leaks.length} log line(s), first: ${leaks[0]!.line}`);
}
