import { afterAll, beforeAll } from 'vitest';
import type { RunEvent } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import type { Agent } from '../../src/runtime/agent.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { eventsOf, openRaw, type Received } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

/** The two backends the engine tests run on: embedded memory, and real Redis (unique key prefix). */
export const BACKENDS = ['memory', 'redis'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** An API on `backend` that executes runs in this process, with `agents` registered, and calls on it. */
export interface GraphApi {
  app: TestApi;
  get(path: string): Promise<{ status: number; headers: Headers; body: any }>;
  post(path: string, json?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  del(path: string): Promise<{ status: number; headers: Headers; body: any }>;
  /** Waits until the run has `status` and answers it. */
  runUntil(runId: string, status: string): Promise<any>;
  /** The pending approvals of one run, oldest first. */
  pendingOf(runId: string): Promise<any[]>;
  /**
   * The retained events of a session, replayed by GET /api/events/stream with Last-Event-ID
   * (from `afterId`, else from the first), up to the first one `until` accepts.
   */
  replay(sessionId: string, until: (event: RunEvent) => boolean, afterId?: string): Promise<Received[]>;
}

/**
 * Starts one API per test file (beforeAll) on `backend` with `agents` (and settings `env`),
 * executing runs in this process, and closes it (afterAll). Call at the top of a describe block.
 */
export function useGraphApi(backend: BackendName, agents: () => Agent[], env: Record<string, string> = {}): GraphApi {
  let redis: TestRedis | undefined;
  const api = { app: undefined as unknown as TestApi } as GraphApi;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    api.app = await startTestApi({ agents: new AgentRegistry(agents()), env, ...(redis ? { redisUrl: redis.url } : {}) });
    if (api.app.backend.mode !== backend) throw new Error(`Asked for the ${backend} backend, got ${api.app.backend.mode}.`);
    api.app.composition.startExecuting();
  });
  afterAll(async () => {
    await api.app?.close();
    await redis?.stop();
  });
  api.get = (path) => call(`${api.app.url}${path}`);
  api.post = (path, json = {}, headers = {}) => call(`${api.app.url}${path}`, { method: 'POST', json, headers });
  api.del = (path) => call(`${api.app.url}${path}`, { method: 'DELETE' });
  api.runUntil = (runId, status) =>
    waitFor(`run ${runId} ${status}`, async () => {
      const { body } = await api.get(`/api/runs/${runId}`);
      return body?.status === status && body;
    });
  api.pendingOf = async (runId) => {
    const { body } = await api.get('/api/approval/pending?limit=500');
    return (body.pending as any[]).filter((approval) => approval.run_id === runId);
  };
  api.replay = async (sessionId, until, afterId = '0-0') => {
    const stream = await openRaw(`${api.app.url}/api/events/stream?session=${sessionId}`, { 'Last-Event-ID': afterId });
    try {
      await stream.waitForFrames((frames) => eventsOf(frames).some((r) => until(r.event)), `an event of session ${sessionId} to end the replay`);
      const received = eventsOf(stream.frames);
      return received.slice(0, received.findIndex((r) => until(r.event)) + 1);
    } finally {
      stream.destroy();
    }
  };
  return api;
}
