import { WORKLOADS, type Workload } from './workloads.js';

/** Where `npm run bench:langgraph` runs the agents: one process in memory, or API + workers on Redis. */
export type LangGraphBackend = 'embedded' | 'redis';

/** Settings of `npm run bench:langgraph`, from `--name value` arguments. */
export interface LangGraphBenchOptions {
  /** Measured runs (approval round trips) per agent, client count and round. @defaultValue 500 */
  runs: number;
  /** Runs before each measured batch, not counted. @defaultValue 100 */
  warmup: number;
  /** Rounds over every agent and client count; medians over rounds are reported. @defaultValue 3 */
  rounds: number;
  /** Closed-loop client counts (any, e.g. `--clients 1,8,32`), each client's next call after its previous answer. @defaultValue [1, 8] */
  clientCounts: number[];
  /** What is measured: `echo` runs, `approval` round trips (human-review). @defaultValue ['echo', 'approval'] */
  workloads: Workload[];
  /** Backends measured, one after the other. @defaultValue ['embedded', 'redis'] */
  backends: LangGraphBackend[];
  /** Redis: worker processes beside the API. @defaultValue 1 */
  workers: number;
  /** WORKER_CONCURRENCY (jobs per worker process; embedded: of the API process). @defaultValue 8 */
  concurrency: number;
  /** Write the section "## LangGraph graphs" of BENCHMARKS.md (off with `--no-write`). */
  write: boolean;
  /** The whole benchmark is stopped (exit 2) past this. @defaultValue 1800 */
  limitSec: number;
  /** `--profile DIR`: the API and worker processes run with `--cpu-prof` and write their .cpuprofile there on exit. */
  profileDir?: string;
}

const USAGE = `npm run bench:langgraph -- [--runs N] [--warmup N] [--rounds N] [--clients 1,8,32]
                             [--backends embedded,redis] [--workloads echo,approval] [--workers N] [--concurrency N]
                             [--no-write] [--limit-sec S] [--profile DIR]`;

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer, got "${raw}".\n${USAGE}`);
  return value;
}

function backends(raw: string | undefined): LangGraphBackend[] {
  const parts = (raw ?? '').split(',');
  if (parts.some((p) => p !== 'embedded' && p !== 'redis')) throw new Error(`--backends takes embedded and/or redis, got "${raw}".\n${USAGE}`);
  return [...new Set(parts as LangGraphBackend[])];
}

function workloads(raw: string | undefined): Workload[] {
  const parts = (raw ?? '').split(',');
  if (parts.some((p) => !WORKLOADS.includes(p as Workload))) throw new Error(`--workloads takes ${WORKLOADS.join(' and/or ')}, got "${raw}".\n${USAGE}`);
  return WORKLOADS.filter((w) => parts.includes(w));
}

export function parseOptions(argv: string[]): LangGraphBenchOptions {
  const options: LangGraphBenchOptions = {
    runs: 500,
    warmup: 100,
    rounds: 3,
    clientCounts: [1, 8],
    backends: ['embedded', 'redis'],
    workloads: [...WORKLOADS],
    workers: 1,
    concurrency: 8,
    write: true,
    limitSec: 1800,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    const value = () => argv[++i];
    switch (flag) {
      case '--runs': options.runs = positive('runs', value()); break;
      case '--warmup': options.warmup = positive('warmup', value()); break;
      case '--rounds': options.rounds = positive('rounds', value()); break;
      case '--clients': options.clientCounts = (value() ?? '').split(',').map((part) => positive('clients', part)); break;
      case '--backends': options.backends = backends(value()); break;
      case '--workloads': options.workloads = workloads(value()); break;
      case '--workers': options.workers = positive('workers', value()); break;
      case '--concurrency': options.concurrency = positive('concurrency', value()); break;
      case '--limit-sec': options.limitSec = positive('limit-sec', value()); break;
      case '--no-write': options.write = false; break;
      case '--profile': options.profileDir = value() || undefined; break;
      default: throw new Error(`Unknown argument "${flag}".\n${USAGE}`);
    }
  }
  return options;
}
