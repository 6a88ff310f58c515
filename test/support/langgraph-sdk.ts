import { Client } from '@langchain/langgraph-sdk';
import { expect } from 'vitest';
import type { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from './app.js';
import { startRedis, type TestRedis } from './redis.js';

/**
 * The status and JSON body of the HTTP error a `@langchain/langgraph-sdk` call fails with (its
 * HTTPError carries `status` and the body's text); fails when the call succeeds.
 */
export async function sdkFailure(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<{ status: number; body: any }> {
  const error = await (typeof promise === 'function' ? promise() : promise).then(
    () => undefined,
    (e: unknown) => e as { status?: number; text?: string },
  );
  if (!error) throw new Error('expected the call to fail');
  return { status: error.status ?? 0, body: JSON.parse(error.text ?? 'null') };
}

/** The API keys of two secured tenants: tenant A's user and viewer, tenant B's user (`${prefix}-a-user`, …). */
export function tenantKeys(prefix: string): { a: string; aViewer: string; b: string } {
  return { a: `${prefix}-a-user`, aViewer: `${prefix}-a-viewer`, b: `${prefix}-b-user` };
}

export interface SecuredTenants {
  app: TestApi;
  /** SDK clients of the API with tenant A's user key, tenant A's viewer key and tenant B's user key. */
  a: Client;
  aViewer: Client;
  b: Client;
  /** Closes the API, then stops its Redis (when it has one). */
  close(): Promise<void>;
}

export interface SecuredTenantsOptions {
  /** The keys of tenant A (TenantA: a user and a viewer) and of tenant B (TenantB: a user), as tenantKeys makes them. */
  keys: { a: string; aViewer: string; b: string };
  agents: AgentRegistry;
  /** More entries of SERVICE_API_KEYS (`key:role:tenant`, comma-separated) after the two tenants'. */
  moreKeys?: string;
  /** More of the API's environment. */
  env?: Record<string, string>;
}

/**
 * An API with API keys and RBAC on, on `backend` (for Redis, one started for it alone), executing
 * runs in this process, for two tenants: TenantA with a user and a viewer key, TenantB with a
 * user key; and an SDK client for each key.
 */
export async function startSecuredTenants(backend: 'memory' | 'redis', options: SecuredTenantsOptions): Promise<SecuredTenants> {
  const { keys } = options;
  const redis: TestRedis | undefined = backend === 'redis' ? await startRedis() : undefined;
  let app: TestApi | undefined;
  const close = async () => {
    await app?.close();
    await redis?.stop();
  };
  try {
    app = await startTestApi({
      agents: options.agents,
      secured: true,
      ...(redis ? { redisUrl: redis.url } : {}),
      env: {
        SERVICE_AUTH: 'apikey',
        SERVICE_RBAC: 'true',
        SERVICE_API_KEYS: [`${keys.a}:user:TenantA,${keys.aViewer}:viewer:TenantA,${keys.b}:user:TenantB`, ...(options.moreKeys ? [options.moreKeys] : [])].join(','),
        ...options.env,
      },
    });
    expect(app.backend.mode).toBe(backend);
    app.composition.startExecuting();
  } catch (error) {
    await close();
    throw error;
  }
  const { url } = app;
  const client = (apiKey: string) => new Client({ apiUrl: url, apiKey });
  return { app, a: client(keys.a), aViewer: client(keys.aViewer), b: client(keys.b), close };
}
