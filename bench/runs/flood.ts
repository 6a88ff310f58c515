import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { count, parseFlags, toggle, type Flags } from '../harness/args.js';
import { redisVersion } from '../harness/redis.js';
import { describeMachine, machine, sourceRevision } from '../harness/report.js';
import { runBench, STACK_ENV, type BenchProcesses } from '../harness/run.js';
import { percentile } from '../harness/stats.js';
import { sleep } from '../harness/client.js';

/**
 * `npm run bench:runs:flood`: two tenants, one flooding. Tenant A keeps its queue full (as many
 * echo runs waiting or running as its cap, refilled as they end, and past it the 429 of the
 * queued cap); tenant B starts echo runs one at a time, each after the previous ended. Reports
 * B's start latency (POST sent → its run's first `node_start` event) p50/p99, A's throughput
 * meanwhile and A's mean queue depth. On a private redis-server, one API and `--workers`
 * worker processes. Prints the row; BENCHMARKS.md is written by hand from it (`--no-write`, which
 * bench/compare-trees.sh passes to every benchmark, changes nothing).
 */
const USAGE = 'npm run bench:runs:flood -- [--b-runs 100] [--cap 500] [--a-clients 16] [--workers 2] [--concurrency 8] [--no-write]';
const FLAGS = { bRuns: count(100), cap: count(500), aClients: count(16), workers: count(2), concurrency: count(8), noWrite: toggle() };
type FloodOptions = Flags<typeof FLAGS>;

const PREFIX = STACK_ENV.SERVICE_KEY_PREFIX;
const KEYS = { A: 'flood-key-tenant-a-0123456789', B: 'flood-key-tenant-b-0123456789' } as const;
type Tenant = keyof typeof KEYS;

/** Run events of both tenants from the events channel: `node_start` (the first per run) and the end. */
class Watch {
  readonly started = new Map<string, number>();
  readonly ended = new Map<string, number>();
  private waiters = new Map<string, () => void>();
  /** Runs of A that ended (A's throughput). */
  aEnded = 0;
  onAEnd: (() => void) | undefined;

  handle(message: string): void {
    const { tenant, event } = JSON.parse(message) as { tenant: string; event: { type: string; run_id: string } };
    const at = performance.now();
    if (event.type === 'node_start' && !this.started.has(event.run_id)) this.started.set(event.run_id, at);
    if (event.type === 'completed' || event.type === 'failed' || event.type === 'cancelled') {
      this.ended.set(event.run_id, at);
      if (tenant === 'TenantA') {
        this.aEnded += 1;
        this.onAEnd?.();
      }
      this.waiters.get(event.run_id)?.();
    }
  }

  /** Resolves once the run ended (at once when it already has). */
  end(runId: string): Promise<void> {
    if (this.ended.has(runId)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(runId, resolve));
  }
}

async function post(url: string, tenant: Tenant): Promise<{ status: number; runId?: string }> {
  const response = await fetch(`${url}/api/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': KEYS[tenant] },
    body: JSON.stringify({ agent_id: 'echo', input: { text: tenant } }),
  });
  const body = (await response.json()) as { run_id?: string };
  return { status: response.status, ...(body.run_id ? { runId: body.run_id } : {}) };
}

async function main(processes: BenchProcesses, o: FloodOptions): Promise<void> {
  const redis = await processes.redis();
  const m = machine(await redisVersion(redis.client('flood:version')));
  console.log(
    `bench:runs:flood on ${describeMachine(m)}, Redis ${m.redis}; ${sourceRevision()}; ` +
      `${o.workers} workers × ${o.concurrency}; A keeps ${o.cap} runs queued or running (${o.aClients} POST clients), B starts ${o.bRuns} runs one at a time`,
  );
  const env = {
    ...STACK_ENV,
    SERVICE_RATE_LIMIT: 'off',
    SERVICE_AUTH: 'apikey',
    SERVICE_API_KEYS: `${KEYS.A}:user:TenantA,${KEYS.B}:user:TenantB`,
    SERVICE_TENANT_MAX_QUEUED: String(o.cap),
  };
  const { api } = await processes.stack({ redis, env, workers: o.workers, workerEnv: { WORKER_CONCURRENCY: String(o.concurrency) } });
  const watch = new Watch();
  const subscriber = redis.client('flood:subscriber');
  subscriber.on('message', (_channel: string, message: string) => watch.handle(message));
  await subscriber.subscribe(`${PREFIX}:events`);

  // A: each client posts while A has fewer than `cap` runs outstanding (accepted, not ended);
  // a 429 (the queued cap: runs ended but not yet announced) waits for the next end of A's.
  let aAccepted = 0;
  let aRefused = 0;
  let flooding = true;
  const aEndedSignal = () => new Promise<void>((resolve) => (watch.onAEnd = resolve));
  const aClient = async () => {
    while (flooding) {
      if (aAccepted - watch.aEnded >= o.cap) {
        await Promise.race([aEndedSignal(), sleep(50)]);
        continue;
      }
      const answer = await post(api.url, 'A');
      if (answer.status === 202) aAccepted += 1;
      else if (answer.status === 429) {
        aRefused += 1;
        await Promise.race([aEndedSignal(), sleep(50)]);
      } else throw new Error(`A's POST answered ${answer.status}`);
    }
  };
  const aClients = Array.from({ length: o.aClients }, aClient);
  // Until A's queue is full.
  while (aAccepted - watch.aEnded < o.cap * 0.9) await sleep(20);

  const depths: number[] = [];
  const sampler = setInterval(() => depths.push(aAccepted - watch.aEnded), 100);
  const load = loadavg()[0]!;
  const aEndedBefore = watch.aEnded;
  const from = performance.now();
  const latencies: number[] = [];
  for (let i = 0; i < o.bRuns; i += 1) {
    const sent = performance.now();
    const answer = await post(api.url, 'B');
    if (answer.status !== 202 || !answer.runId) throw new Error(`B's POST answered ${answer.status}`);
    await watch.end(answer.runId);
    latencies.push(watch.started.get(answer.runId)! - sent);
  }
  const seconds = (performance.now() - from) / 1000;
  clearInterval(sampler);
  flooding = false;
  await Promise.all(aClients);
  latencies.sort((a, b) => a - b);
  const meanDepth = depths.reduce((s, d) => s + d, 0) / Math.max(1, depths.length);
  const aPerSec = (watch.aEnded - aEndedBefore) / seconds;
  console.log('\n| B: start latency p50 ms | p99 ms | B runs | A: runs/s meanwhile | A: mean runs outstanding (cap) | A: 429s | FIFO estimate for B (A outstanding ÷ A runs/s) | load avg |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${latencies.length} | ${aPerSec.toFixed(0)} | ${meanDepth.toFixed(0)} (${o.cap}) | ${aRefused} | ${((meanDepth / aPerSec) * 1000).toFixed(0)} ms | ${load.toFixed(1)} |`,
  );
}

const { flags } = parseFlags(process.argv.slice(2), FLAGS, USAGE);
await runBench('bench:runs:flood', 3600, (processes) => main(processes, flags));
