import { expect } from 'vitest';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { watch, type Received, type Watcher } from '../support/sse.js';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startRunWorker } from '../runs/backends.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

/**
 * A failover under load, shared by the Redis Cluster and the Sentinel tests: runs started in a
 * loop on two API replicas, an event stream per tenant held open on each replica, and the
 * readiness of every process polled throughout, while `failover` kills a master.
 */
export interface FailoverLoad {
  /** Processes whose `/health/ready` is polled (APIs and workers). */
  probed: { name: string; url: string }[];
  apis: TestApi[];
  tenants: string[];
  /** Headers that make a request run in the tenant. */
  headers(tenant: string): Record<string, string>;
  /**
   * Kills the master, after cutting its replicas off and calling `beforeKill` (so that what it
   * acknowledged last exists nowhere else: see FailoverOptions.unreplicated); resolves once a
   * replica has taken over.
   */
  failover(beforeKill: () => Promise<void>): Promise<unknown>;
}

/**
 * Two API replicas (API keys per tenant) and two worker processes on the Redis `redis` names, with
 * durable acknowledgements (REDIS_WAIT_REPLICAS=1): an acknowledged write is on a replica too.
 */
export interface FailoverProcesses {
  apis: TestApi[];
  workers: AgentProcess[];
  headers(tenant: string): Record<string, string>;
  /** The APIs and workers, for {@link FailoverLoad.probed}. */
  probed(): { name: string; url: string }[];
  /**
   * Stops them all; resolves with one line per worker that did not exit 0 (its code and its
   * last log lines), so an empty list is a clean stop.
   */
  stop(): Promise<string[]>;
}

export async function startFailoverProcesses(redis: Record<string, string>, tenants: string[]): Promise<FailoverProcesses> {
  const headers = (tenant: string) => ({ 'X-Api-Key': `key-${tenant}-0b7a` });
  const env = { ...redis, REDIS_WAIT_REPLICAS: '1' };
  const secured = {
    ...env,
    SERVICE_AUTH: 'apikey',
    SERVICE_API_KEYS: tenants.map((t) => `${headers(t)['X-Api-Key']}:user:${t}`).join(','),
    SERVICE_RATE_LIMIT: 'off',
  };
  const registry = new AgentRegistry(agents);
  const apis = await Promise.all(['a', 'b'].map((id) => startTestApi({ env: { ...secured, SERVICE_REPLICA_ID: id }, secured: true, agents: registry })));
  // The reaper settles a run whose job was lost with the master within seconds; a worker's
  // graceful shutdown is bounded well inside the 15 s stop() allows before SIGKILL.
  const workers = await Promise.all(
    [0, 1].map(() => startRunWorker(env, apis[0]!, { SLOW_NODE_MS: '300', RUN_REAPER_INTERVAL_MS: '2000', SERVICE_SHUTDOWN_TIMEOUT_MS: '5000' })),
  );
  return {
    apis,
    workers,
    headers,
    probed: () => [...apis.map((api, i) => ({ name: `api-${i}`, url: api.url })), ...workers.map((w, i) => ({ name: `worker-${i}`, url: w.url }))],
    async stop() {
      const codes = await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(apis.map((api) => api.close()));
      return workers.flatMap((w, i) =>
        codes[i] === 0 ? [] : [`worker-${i} exited ${codes[i]}; last lines:\n${w.lines.slice(-30).map((l) => l.text).join('\n')}`],
      );
    },
  };
}

/**
 * The test both failover suites make: {@link failoverUnderLoad} on `processes` and `tenants`
 * while `failover` kills the master, then every process said 503 while the master was away.
 */
export async function expectFailoverSurvived(
  processes: FailoverProcesses,
  tenants: string[],
  failover: FailoverLoad['failover'],
): Promise<FailoverReport> {
  const report = await failoverUnderLoad({ apis: processes.apis, tenants, headers: processes.headers, probed: processes.probed(), failover });
  for (const [name, seen] of Object.entries(report.readiness)) expect(seen.during, name).toContain(503);
  return report;
}

export interface FailoverReport {
  /** Acknowledged runs (202), how they ended, and when they were acknowledged relative to the kill. */
  runs: { id: string; tenant: string; status: string; ackedMs: number; tookOverMs: number }[];
  /** Readiness answers of each process: before the kill, between kill and takeover, after. */
  readiness: Record<string, { before: number[]; during: number[]; after: number[] }>;
}

interface Started {
  id: string;
  tenant: string;
  api: TestApi;
  /** When the 202 arrived (ms). */
  at: number;
}

/**
 * Runs the scenario and checks what a failover must keep: every acknowledged run completes
 * (the processes WAIT for a replica before acknowledging, so none is lost with the master,
 * however close to the kill it was acknowledged, even with the replicas cut off); each stream
 * (resumed with Last-Event-ID by its EventSource if it was cut) delivers every one of the
 * tenant's retained events since it opened, in order, without gaps or duplicates (and beyond
 * them only events the killed master never replicated, delivered before the kill); readiness
 * answers 200 before, turns 503 while the master is away, and 200 again without a restart.
 */
export async function failoverUnderLoad(load: FailoverLoad): Promise<FailoverReport> {
  const { apis, tenants } = load;
  const streams: { tenant: string; api: TestApi; watcher: Watcher; since: string }[] = [];
  for (const api of apis) {
    for (const tenant of tenants) {
      const since = await lastEventId(api, tenant);
      streams.push({ tenant, api, since, watcher: watch(`${api.url}/api/events/stream`, { headers: load.headers(tenant) }) });
    }
  }
  const closeAll = () => streams.forEach((s) => s.watcher.close());
  try {
    await Promise.all(streams.map((s) => s.watcher.waitForOpen()));
    const started: Started[] = [];
    /** When each answered request to start a run was sent (ms), whatever the answer. */
    const answered: number[] = [];
    let phase: 'before' | 'during' | 'after' = 'before';
    let stop = false;
    const readiness: FailoverReport['readiness'] = Object.fromEntries(load.probed.map((p) => [p.name, { before: [], during: [], after: [] }]));
    const probe = (async () => {
      while (!stop) {
        await Promise.all(
          load.probed.map(async (p) => {
            const status = await fetch(`${p.url}/health/ready`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.status, () => 0);
            readiness[p.name]![phase].push(status);
          }),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const starters = apis.flatMap((api) =>
      tenants.map(async (tenant) => {
        for (let i = 0; !stop; i += 1) {
          const body = i % 3 === 2 ? { agent_id: 'slow', input: { n: i } } : { agent_id: 'echo', input: { i } };
          const sent = Date.now();
          const answer = await call(`${api.url}/api/runs`, { method: 'POST', json: body, headers: load.headers(tenant), signal: AbortSignal.timeout(10_000) }).catch(
            () => ({ status: 0, body: undefined }),
          );
          answered.push(sent);
          // Refused (503) while the master is away: not acknowledged, nothing to check.
          if (answer.status === 202) started.push({ id: answer.body.run_id, tenant, api, at: Date.now() });
        }
      }),
    );
    await waitFor('runs before the kill', () => started.length >= 10, 30_000);
    phase = 'during';
    const killedAt = Date.now();
    // The master's replicas are cut off: a request sent now writes to the master alone. It is
    // answered before the kill (acknowledged only if a replica confirmed its writes).
    await load.failover(async () => {
      const cut = Date.now();
      await waitFor('a request sent after the replicas were cut off to be answered', () => answered.some((at) => at >= cut), 30_000);
    });
    const tookOverAt = Date.now();
    const afterTakeover = started.length;
    phase = 'after';
    await waitFor('runs acknowledged after the takeover', () => started.length >= afterTakeover + 10, 60_000);
    await waitFor('every process ready again', () => load.probed.every((p) => readiness[p.name]!.after.at(-1) === 200), 60_000);
    stop = true;
    await Promise.all([probe, ...starters]);

    const runs = await Promise.all(
      started.map(async (run) => {
        const final = await waitFor(
          `acknowledged run ${run.id} to end`,
          async () => {
            const now = await call(`${run.api.url}/api/runs/${run.id}`, { headers: load.headers(run.tenant) });
            // A run written only to the killed master is gone: what REDIS_WAIT_REPLICAS prevents.
            if (now.status === 404) return 'lost';
            if (!['completed', 'failed', 'cancelled'].includes(now.body?.status)) return false;
            return now.body.status === 'completed' ? 'completed' : `${now.body.status}: ${now.body.error}`;
          },
          90_000,
          100,
        );
        // When it was acknowledged, relative to the kill: what a reader of a failure needs.
        return { id: run.id, tenant: run.tenant, status: final as string, ackedMs: run.at - killedAt, tookOverMs: tookOverAt - killedAt };
      }),
    );
    // Nothing is left queued or running, nothing is lost (gone, or its job gone and the reaper
    // ended it failed): every acknowledged run completes.
    expect(runs.filter((r) => r.status !== 'completed')).toEqual([]);

    for (const stream of streams) {
      const retained = await retainedSince(stream.api, stream.tenant, stream.since);
      const ids = retained.map((e) => e.id);
      const received = stream.watcher.received;
      await waitFor(`every retained event of ${stream.tenant} on its stream`, () => {
        const got = new Set(received.map((e) => e.id));
        return ids.every((id) => got.has(id));
      }, 30_000);
      // In order, without duplicates, so the retained events too. Beyond them only what the
      // killed master published and never replicated (events are not WAITed for), delivered
      // before the kill: nothing published since the takeover is missing or added.
      expectRising(received);
      // Runs whose start was refused (503: WAIT unconfirmed) or timed out may exist and still be
      // running: compare what was received so far with the stream read after it, not before.
      // The read may trail the stream by the events published last (the read's connection
      // catching up after the failover): read again until it holds them, or fail with the missing.
      const seen = received.slice();
      let missing: Received[] = [];
      await waitFor('every event seen since the takeover in the stream read after it', async () => {
        const kept = new Set((await retainedSince(stream.api, stream.tenant, stream.since)).map((e) => e.id));
        missing = seen.filter((e) => !kept.has(e.id) && eventMs(e.id) >= tookOverAt);
        return missing.length === 0;
      }, 10_000).catch(() => undefined);
      expect(missing).toEqual([]);
      const ended = new Set(seen.filter((e) => e.event.type === 'completed').map((e) => e.event.run_id));
      for (const run of runs.filter((r) => r.tenant === stream.tenant && r.status === 'completed')) expect(ended.has(run.id)).toBe(true);
    }
    for (const p of load.probed) {
      const seen = readiness[p.name]!;
      expect(seen.before.length > 0 && seen.before.every((s) => s === 200)).toBe(true);
      expect(seen.after.at(-1)).toBe(200);
    }
    return { runs, readiness };
  } finally {
    closeAll();
  }
}

/** The time part of an event id (`<ms>-<seq>`). */
const eventMs = (id: string): number => Number(id.split('-')[0]);

function expectRising(events: Received[]): void {
  for (let i = 1; i < events.length; i += 1) expect(compareEventIds(events[i]!.id, events[i - 1]!.id)).toBeGreaterThan(0);
}

/** The id of the tenant's newest retained event ('0-0' when none), read through the API's bus. */
async function lastEventId(api: TestApi, tenant: string): Promise<string> {
  const all = await retainedSince(api, tenant, '0-0');
  return all.at(-1)?.id ?? '0-0';
}

/** The tenant's retained events after `afterId`, read through the API's bus. */
async function retainedSince(api: TestApi, tenant: string, afterId: string): Promise<Received[]> {
  const events = await api.backend.events.readAfter(tenant, afterId, 100_000);
  return events.map((e) => ({ id: e.id, event: e.event }));
}
