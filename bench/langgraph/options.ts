import { choices, count, counts, parseFlags, text, toggle } from '../harness/args.js';
import { BACKENDS, type LangGraphBackend } from './stack.js';
import { WORKLOADS, type Workload } from './workloads.js';

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

const FLAGS = {
  runs: count(500),
  warmup: count(100),
  rounds: count(3),
  clients: counts([1, 8]),
  backends: choices(BACKENDS, BACKENDS),
  workloads: choices(WORKLOADS, WORKLOADS),
  workers: count(1),
  concurrency: count(8),
  limitSec: count(1800),
  noWrite: toggle(),
  profile: text(),
};

export function parseOptions(argv: string[]): LangGraphBenchOptions {
  const { flags: f } = parseFlags(argv, FLAGS, USAGE);
  return {
    runs: f.runs,
    warmup: f.warmup,
    rounds: f.rounds,
    clientCounts: f.clients,
    // Whatever order they are given in, the workloads are measured and reported in this one.
    workloads: WORKLOADS.filter((w) => f.workloads.includes(w)),
    backends: f.backends,
    workers: f.workers,
    concurrency: f.concurrency,
    write: !f.noWrite,
    limitSec: f.limitSec,
    profileDir: f.profile,
  };
}
