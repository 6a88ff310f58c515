/**
 * `npm run bench:storage`: what agentplane keeps in Redis. On a private redis-server, one
 * process composed as a worker executes echo runs (2 nodes, the default retention and limits)
 * started through the run control, then one session takes small patches. Reports Redis
 * `used_memory` and `DBSIZE` per echo run and per checkpoint, the size after N runs, and the
 * month-at-10-runs/s estimate with and without SERVICE_SESSION_TTL, and how long another
 * tenant's read takes while one-key patches land on a 60,000-key state. Writes the `## Storage`
 * section of BENCHMARKS.md (off with --no-write).
 *
 */
import { cpus, totalmem } from 'node:os';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { builtInAgents } from '../../src/agents/index.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { compose } from '../../src/main/compose.js';
import { createLogger } from '../../src/main/logger.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { benchCommand, count, parseFlags, toggle } from '../harness/args.js';
import { redisVersion } from '../harness/redis.js';
import { generatedBlock, stamp, writeBlock, type SectionPlace } from '../harness/report.js';
import { runBench, type BenchProcesses } from '../harness/run.js';
import { measureIsolation } from './isolation.js';
import { sleep } from '../harness/client.js';

const USAGE = 'npm run bench:storage -- [--runs N] [--patches N] [--no-write]';
const argv = process.argv.slice(2);
const { flags } = parseFlags(argv, { runs: count(5000), patches: count(2000), noWrite: toggle() }, USAGE);
const RUNS = flags.runs;
const PATCHES = flags.patches;
const MONTH_RUNS = 10 * 86_400 * 30;
const SECTION: SectionPlace = { heading: '## Storage', name: 'storage' };

async function usage(admin: Redis): Promise<{ bytes: number; keys: number }> {
  const info = await admin.info('memory');
  return { bytes: Number(/^used_memory:(\d+)/m.exec(info)![1]), keys: await admin.dbsize() };
}

async function main(processes: BenchProcesses): Promise<void> {
  const redis = await processes.redisServer();
  const admin = new Redis(redis.url);
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const config = loadConfig({ REDIS_URL: redis.url, SERVICE_KEY_PREFIX: 'bench', LOG_LEVEL: 'warn', WORKER_CONCURRENCY: '16' });
  const worker = compose(config, { logger: createLogger('warn', quiet), agents: new AgentRegistry(builtInAgents), defaultMetrics: false });
  worker.startExecuting();
  try {
    const { store } = worker.backend;
    // Warm-up: queues and scripts exist before the measurement.
    const warm = await worker.runs.startRun(DEFAULT_TENANT, { agent_id: 'echo', input: { message: 'warm' } });
    await waitRun(store, warm.run_id);
    const before = await usage(admin);
    const tickets = [];
    for (let i = 0; i < RUNS; i += 1) tickets.push(await worker.runs.startRun(DEFAULT_TENANT, { agent_id: 'echo', input: { message: `hello ${i}`, i } }));
    for (const ticket of tickets) await waitRun(store, ticket.run_id);
    await admin.call('MEMORY', 'PURGE').catch(() => undefined);
    const afterRuns = await usage(admin);
    const perRun = { bytes: (afterRuns.bytes - before.bytes) / RUNS, keys: (afterRuns.keys - before.keys) / RUNS };

    const session = tickets[0]!.session_id;
    const beforePatches = await usage(admin);
    for (let i = 0; i < PATCHES; i += 1) {
      await store.sessions.appendCheckpoint(DEFAULT_TENANT, session, { patch: { [`note${i % 20}`]: `edit ${i}`, counter: i } });
    }
    const afterPatches = await usage(admin);
    const perCheckpoint = (afterPatches.bytes - beforePatches.bytes) / PATCHES;
    const history = await store.sessions.listCheckpoints(DEFAULT_TENANT, session, { limit: 500, offset: 0, maxBytes: Infinity });
    const isolation = await measureIsolation(store, admin, config.SERVICE_KEY_PREFIX);

    const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
    const gib = (n: number) => `${(n / 1073741824).toFixed(1)} GiB`;
    const body = generatedBlock(SECTION, [
      `Command: \`${benchCommand('bench:storage', argv)}\` (${stamp()} UTC). ` +
        `Machine: ${cpus().length} cores, ${Math.round(totalmem() / 1073741824)} GiB, Node ${process.version}, private redis-server (${await redisVersion(admin)}).`,
      '',
      `${RUNS} echo runs (2 nodes, input of two keys) executed by one worker composition with the default limits (state ≤ 1 MiB, 50 checkpoints retained), then ${PATCHES} one- or two-key patches of one session.`,
      '',
      '| measure | figure |',
      '|---|---:|',
      `| Redis memory per echo run (session, 3 checkpoints, 3 spans, run, events, BullMQ job) | ${(perRun.bytes / 1024).toFixed(2)} KiB |`,
      `| keys per echo run | ${perRun.keys.toFixed(2)} |`,
      `| Redis memory after ${RUNS} runs (whole server) | ${mib(afterRuns.bytes)} |`,
      `| Redis memory per patch checkpoint (history entry, state keys; retention drops old entries) | ${perCheckpoint.toFixed(0)} bytes |`,
      `| checkpoints kept of the patched session | ${history.checkpoints.length} (seq ${history.checkpoints.at(-1)?.seq_num}–${history.checkpoints[0]?.seq_num}) |`,
      `| a month at 10 runs/s, no expiry (${(MONTH_RUNS / 1e6).toFixed(1)}M runs) | ${gib(perRun.bytes * MONTH_RUNS)}, ${((perRun.keys * MONTH_RUNS) / 1e6).toFixed(0)}M keys |`,
      `| the same with SERVICE_SESSION_TTL=7d (a week of runs held) | ${gib(perRun.bytes * 10 * 86_400 * 7)} |`,
      `| the same with SERVICE_SESSION_TTL=1d | ${gib(perRun.bytes * 10 * 86_400)} |`,
      `| another tenant's run read (median, at Redis), idle / during one-key patches of a ${isolation.stateKeys.toLocaleString('en')}-key state (4 loops, ${isolation.patches} patches) | ` +
        `${isolation.idleMs.toFixed(2)} ms / ${isolation.busyMs.toFixed(2)} ms (${(isolation.busyMs / isolation.idleMs).toFixed(1)}×) |`,
    ]);
    console.log(body);
    if (!flags.noWrite) writeBlock(SECTION, body);
  } finally {
    await worker.close();
    admin.disconnect();
  }
}

async function waitRun(store: ReturnType<typeof compose>['backend']['store'], runId: string): Promise<void> {
  for (;;) {
    const run = await store.runs.getRun(DEFAULT_TENANT, runId);
    if (run && (run.status === 'completed' || run.status === 'failed')) return;
    await sleep(5);
  }
}

await runBench('bench:storage', 1800, main);
