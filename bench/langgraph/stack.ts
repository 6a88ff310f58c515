import { fileURLToPath } from 'node:url';
import type { MeasuredProcesses } from '../harness/measure.js';
import { redisVersion } from '../harness/redis.js';
import { machine, type Machine } from '../harness/report.js';
import { STACK_ENV, type BenchProcesses } from '../harness/run.js';

/** Where the LangGraph benchmarks run the agents: one process in memory, or API + workers on Redis. */
export type LangGraphBackend = 'embedded' | 'redis';

export const BACKENDS: readonly LangGraphBackend[] = ['embedded', 'redis'];

/** Serves examples/langgraph/echo.ts as `lg-echo` and human-review.ts as `lg-human-review`: their own ids would replace the native agents. */
const SERVICE_LANGGRAPH_JSON = fileURLToPath(new URL('./langgraph.json', import.meta.url));

/** The bare server's module (bench/langgraph/bare-server.ts), relative to the repository root. */
const BARE_SERVER_ENTRY = 'bench/langgraph/bare-server.ts';

/** The processes measured: the backend, where its API listens, whose CPU counts and (Redis) the client that reads INFO. */
export interface Target extends MeasuredProcesses {
  backend: LangGraphBackend;
  apiUrl: string;
}

/** How many processes a backend runs, and how many jobs each takes. */
export interface StackOptions {
  /** Redis: worker processes beside the API. */
  workers: number;
  /** WORKER_CONCURRENCY (jobs per worker process; embedded: of the API process). */
  concurrency: number;
  /** The API and worker processes write a CPU profile (`--cpu-prof`) into this directory on exit. */
  profileDir?: string;
}

/**
 * Starts each backend in turn (the API, and on Redis a private redis-server and worker
 * processes, with the graphs served beside the native agents), runs `measure` on it and stops
 * it; answers the machine the figures come from.
 */
export async function eachBackend(processes: BenchProcesses, backends: LangGraphBackend[], o: StackOptions, measure: (target: Target) => Promise<void>): Promise<Machine> {
  const env = {
    ...STACK_ENV,
    SERVICE_LANGGRAPH_JSON,
    WORKER_CONCURRENCY: String(o.concurrency),
    // Held waits and streams count against the per-caller stream caps (20 by default).
    SERVICE_RATE_LIMIT: 'off',
    SERVICE_SSE_MAX_PER_PRINCIPAL: '0',
    SERVICE_SSE_MAX_PER_TENANT: '0',
  };
  const nodeArgs = o.profileDir ? ['--cpu-prof', '--cpu-prof-dir', o.profileDir] : [];
  let m: Machine | undefined;
  for (const backend of backends) {
    const redis = backend === 'redis' ? await processes.redis() : undefined;
    const stack = await processes.stack({ redis, env, workers: o.workers, nodeArgs });
    const admin = redis?.client('bench:admin');
    try {
      const version = admin && (await redisVersion(admin));
      if (!m || version) m = machine(version ?? 'n/a');
      await measure({ backend, apiUrl: stack.api.url, groups: stack.groups, admin });
    } finally {
      await stack.stop();
      await redis?.stop();
    }
  }
  return m!;
}

/** LangGraph alone behind a bare node:http server (bare-server.ts), in its own process: stopped with the rest. */
export async function startBare(processes: BenchProcesses): Promise<Target> {
  const bare = await processes.node({ name: 'LangGraph alone (node:http)', entry: BARE_SERVER_ENTRY, portVariable: 'SERVICE_PORT', env: {} });
  return { backend: 'embedded', apiUrl: bare.url, groups: { api: [bare.pid], workers: [], redis: [] } };
}
