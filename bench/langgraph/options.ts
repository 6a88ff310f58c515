import { choices, count, counts, parseFlags, text, toggle, type Flags } from '../harness/args.js';
import { BACKENDS, type LangGraphBackend } from './stack.js';
import { WORKLOADS, type Workload } from './workloads.js';

/** What the LangGraph benchmarks (bench:langgraph, bench:langgraph-sdk) measure in rounds, on which backends. */
export interface RoundsOptions {
  /** Measured runs (round trips) per configuration and round. */
  runs: number;
  /** Runs before each measured batch, not counted. */
  warmup: number;
  /** Rounds over every configuration; medians over rounds are reported. @defaultValue 3 */
  rounds: number;
  /** Closed-loop client counts (any, e.g. `--clients 1,8,32`), each client's next call after its previous answer. @defaultValue [1, 8] */
  clientCounts: number[];
  /** Backends measured, one after the other. @defaultValue ['embedded', 'redis'] */
  backends: LangGraphBackend[];
  /** Redis: worker processes beside the API. @defaultValue 1 */
  workers: number;
  /** WORKER_CONCURRENCY (jobs per worker process; embedded: of the API process). @defaultValue 8 */
  concurrency: number;
  /** Write the section of BENCHMARKS.md (off with `--no-write`). */
  write: boolean;
  /** The whole benchmark is stopped (exit 2) past this. */
  limitSec: number;
}

/** The flags of {@link RoundsOptions}, with the defaults of one benchmark where they differ. */
export const roundsFlags = (defaults: { runs: number; warmup: number; limitSec: number }) => ({
  runs: count(defaults.runs),
  warmup: count(defaults.warmup),
  rounds: count(3),
  clients: counts([1, 8]),
  backends: choices(BACKENDS, BACKENDS),
  workers: count(1),
  concurrency: count(8),
  limitSec: count(defaults.limitSec),
  noWrite: toggle(),
});

/** {@link RoundsOptions} from the values of {@link roundsFlags}. */
export function roundsOptions(f: Flags<ReturnType<typeof roundsFlags>>): RoundsOptions {
  const { runs, warmup, rounds, backends, workers, concurrency, limitSec } = f;
  return { runs, warmup, rounds, clientCounts: f.clients, backends, workers, concurrency, write: !f.noWrite, limitSec };
}

/** Settings of `npm run bench:langgraph` (runs 500, warm-up 100, limit 1800 s), from `--name value` arguments. */
export interface LangGraphBenchOptions extends RoundsOptions {
  /** What is measured: `echo` runs, `approval` round trips (human-review). @defaultValue ['echo', 'approval'] */
  workloads: Workload[];
  /** `--profile DIR`: the API and worker processes run with `--cpu-prof` and write their .cpuprofile there on exit. */
  profileDir?: string;
}

const USAGE = `npm run bench:langgraph -- [--runs N] [--warmup N] [--rounds N] [--clients 1,8,32]
                             [--backends embedded,redis] [--workloads echo,approval] [--workers N] [--concurrency N]
                             [--no-write] [--limit-sec S] [--profile DIR]`;

const FLAGS = { ...roundsFlags({ runs: 500, warmup: 100, limitSec: 1800 }), workloads: choices(WORKLOADS, WORKLOADS), profile: text() };

export function parseOptions(argv: string[]): LangGraphBenchOptions {
  const { flags: f } = parseFlags(argv, FLAGS, USAGE);
  return {
    ...roundsOptions(f),
    // Whatever order they are given in, the workloads are measured and reported in this one.
    workloads: WORKLOADS.filter((w) => f.workloads.includes(w)),
    profileDir: f.profile,
  };
}
