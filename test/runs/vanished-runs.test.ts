import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { DEFAULT_TENANT, type Run } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';
import { trackTimers, type TrackedTimers } from '../support/timers.js';
import { waitFor } from '../support/wait.js';
import { askThenHold, heldNodes, hold } from './hold-agents.js';

/** The part of the memory adapter's (private) tables that removes a session with everything of it. */
interface MemoryTables {
  data(tenant: string): { sessions: Map<string, unknown> };
  remove(tenant: string, record: unknown): void;
}

/**
 * The wait_ms of the waits that see their run vanish: a wait answered at the vanish has its
 * timer of this delay still armed; one answered only when it passed (within the test's own
 * timeout) has it run out.
 */
const WAIT_MS = 25_000;

const redis = useRedis();

describe.each(['memory', 'redis'] as const)('waits and streams on a run whose session vanished (%s)', (mode) => {
  let app: TestApi;
  let raw: Redis | undefined;

  beforeAll(async () => {
    app = await startTestApi({
      ...(mode === 'redis' ? { redisUrl: redis.url } : {}),
      agents: new AgentRegistry([...builtInAgents, hold, askThenHold]),
      env: { SERVICE_SSE_HEARTBEAT_MS: '200' },
    });
    if (mode === 'redis') {
      app.composition.startExecuting();
      raw = new Redis(redis.url);
    }
  });
  afterAll(async () => {
    await app?.close();
    raw?.disconnect();
  });

  /**
   * Removes the session behind the API's back. Memory: straight from the adapter's tables.
   * Redis: every key of the tenant, as a Redis that lost its data (the queue stays).
   */
  async function vanish(sessionId: string): Promise<void> {
    if (mode === 'memory') {
      // The memory adapter's own tables (private): what its expiry and deletion remove a session with.
      const { tables } = app.backend.store as unknown as { tables: MemoryTables };
      tables.remove(DEFAULT_TENANT, tables.data(DEFAULT_TENANT).sessions.get(sessionId));
    } else {
      const keys = await raw!.keys(`${app.config.SERVICE_KEY_PREFIX}:{${DEFAULT_TENANT}}:*`);
      expect(keys.length).toBeGreaterThan(0);
      await raw!.del(...keys);
    }
    expect(await app.backend.store.runs.latestRun(DEFAULT_TENANT, sessionId)).toBeNull();
  }

  /** The timers of this process (the API's waits among them) from now to the test's end. */
  function trackWaitTimers(): TrackedTimers {
    const timers = trackTimers();
    onTestFinished(() => timers.stop());
    return timers;
  }

  /** The session's run once it is `status`. */
  const runOf = (sessionId: string, status: Run['status']) =>
    waitFor(`the run of ${sessionId} to be ${status}`, async () => {
      const run = await app.backend.store.runs.latestRun(DEFAULT_TENANT, sessionId);
      return run?.status === status && run;
    });

  /**
   * The run's node still holds in the executor (its run cannot be cancelled: it is gone): the
   * cancel signal ends it when the test ends, before the executor stops listening for signals.
   */
  function abortOnFinish(): (runId: string) => void {
    const runIds: string[] = [];
    onTestFinished(async () => {
      for (const id of runIds) await app.backend.events.signalCancel({ tenant: DEFAULT_TENANT, run_id: id, reason: 'cancelled' });
      await waitFor('the held node to let go', () => heldNodes() === 0);
    });
    return (runId) => runIds.push(runId);
  }

  it('POST /api/runs/wait answers 410 gone at once, not after wait_ms', async () => {
    const session = `vanish-${randomUUID()}`;
    const abortAtEnd = abortOnFinish();
    const timers = trackWaitTimers();
    const waited = call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'hold', session_id: session, wait_ms: WAIT_MS } });
    const runId = (await runOf(session, 'running')).id;
    abortAtEnd(runId);
    await vanish(session);
    const answer = await waited;
    expect(timers.fired(WAIT_MS), 'answered when wait_ms passed, not at the vanish').toBe(0);
    expect(answer.status, JSON.stringify(answer.body)).toBe(410);
    expect(answer.body.error.code).toBe('gone');
    expect(answer.body.error.message).toContain(runId);
  });

  it('POST /api/runs/stream ends at once with a last `failed` event (error "gone", no id)', async () => {
    const session = `vanish-${randomUUID()}`;
    const abortAtEnd = abortOnFinish();
    const response = await fetch(`${app.url}/api/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'hold', session_id: session }),
    });
    expect(response.status).toBe(200);
    const runId = response.headers.get('x-run-id')!;
    abortAtEnd(runId);
    const text = response.text();
    await runOf(session, 'running');
    await vanish(session);
    // A stream has no wait_ms: one that missed the vanish would not end.
    const blocks = (await text).split('\n\n').filter((b) => b.startsWith('id:') || b.startsWith('data:'));
    const last = blocks.at(-1)!;
    expect(last.startsWith('data: '), last).toBe(true);
    expect(JSON.parse(last.slice('data: '.length))).toMatchObject({ type: 'failed', error: 'gone', run_id: runId, session, agent_id: 'hold' });
    expect(blocks.slice(0, -1).every((b) => b.startsWith('id: '))).toBe(true);
    await waitFor('the stream slot to be released', () => app.api.deps.streams.size === 0);
  });

  it('POST /api/approval/respond with wait_ms answers 410 gone at once when the resumed run vanishes', async () => {
    const session = `vanish-${randomUUID()}`;
    const abortAtEnd = abortOnFinish();
    const paused = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'ask-then-hold', session_id: session, wait_ms: 30_000 } });
    expect(paused.body.status, JSON.stringify(paused.body)).toBe('interrupted');
    const runId = paused.body.id as string;
    abortAtEnd(runId);
    const timers = trackWaitTimers();
    const answered = call(`${app.url}/api/approval/respond`, { method: 'POST', json: { id: paused.body.approval.id, approved: true, wait_ms: WAIT_MS } });
    await waitFor('the resumed run to run its next node', async () => {
      const run = await app.backend.store.runs.getRun(DEFAULT_TENANT, runId);
      return run?.status === 'running' && run.approval_id === paused.body.approval.id;
    });
    await vanish(session);
    const answer = await answered;
    expect(timers.fired(WAIT_MS), 'answered when wait_ms passed, not at the vanish').toBe(0);
    expect(answer.status, JSON.stringify(answer.body)).toBe(410);
    expect(answer.body.error.code).toBe('gone');
  });
});
