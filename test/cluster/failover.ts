import { expect } from 'vitest';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { watch, type Received, type Watcher } from '../events/clients.js';
import { call, type TestApi } from '../support/app.js';
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
  /** Kills the master; resolves once a replica has taken over. */
  failover(): Promise<unknown>;
}

export interface FailoverReport {
  /** Acknowledged runs (202) and how they ended. */
  runs: { id: string; tenant: string; status: string }[];
  /** Readiness answers of each process: before the kill, between kill and takeover, after. */
  readiness: Record<string, { before: number[]; during: number[]; after: number[] }>;
}

interface Started {
  id: string;
  tenant: string;
  api: TestApi;
}

/**
 * Runs the scenario and checks what a failover must keep: every acknowledged run completes;
 * each stream (resumed with Last-Event-ID by its EventSource if it was cut) delivers exactly the
 * tenant's retained events since it opened, in order, without gaps or duplicates; readiness
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
          const answer = await call(`${api.url}/api/runs`, { method: 'POST', json: body, headers: load.headers(tenant), signal: AbortSignal.timeout(10_000) }).catch(
            () => ({ status: 0, body: undefined }),
          );
          // Refused (503) while the master is away: not acknowledged, nothing to check.
          if (answer.status === 202) started.push({ id: answer.body.run_id, tenant, api });
        }
      }),
    );
    await waitFor('runs before the kill', () => started.length >= 10, 30_000);
    phase = 'during';
    await load.failover();
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
            return ['completed', 'failed', 'cancelled'].includes(now.body?.status) && now.body.status;
          },
          90_000,
          100,
        );
        return { id: run.id, tenant: run.tenant, status: final as string };
      }),
    );
    expect(runs.filter((r) => r.status !== 'completed')).toEqual([]);

    for (const stream of streams) {
      const retained = await retainedSince(stream.api, stream.tenant, stream.since);
      const ids = retained.map((e) => e.id);
      await stream.watcher.waitForCount(ids.length, 30_000);
      const received = stream.watcher.received;
      expect(received.map((e) => e.id)).toEqual(ids);
      expectRising(received);
      const ended = new Set(received.filter((e) => e.event.type === 'completed').map((e) => e.event.run_id));
      for (const run of runs.filter((r) => r.tenant === stream.tenant)) expect(ended.has(run.id)).toBe(true);
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
