import { choice, count, counts, flagName, parseFlags, toggle } from '../harness/args.js';

/** What `npm run bench:runs` measures: the default throughput table, or one of the round-trip modes. */
export type BenchMode = 'throughput' | 'wait' | 'review';

/** Settings of `npm run bench:runs`, from `--name value` arguments. */
export interface BenchOptions {
  /**
   * `throughput` (default): the `## Runs` table. `wait`: one echo run through POST /api/runs/wait
   * against polling GET /api/runs/{id}. `review`: the human-review round trip with the waiting
   * routes against the polling flow.
   */
  mode: BenchMode;
  /** Measured runs per configuration (modes: per flow and client count). @defaultValue 5000 (wait 500, review 300) */
  runs: number;
  /** Runs fired (and awaited) before each measured batch, not counted. @defaultValue 1000 (wait 100, review 50) */
  warmup: number;
  /** POST /api/runs requests in flight at most. @defaultValue 64 */
  clients: number;
  /** Modes: the closed-loop client counts measured, each flow with each. @defaultValue wait 1,8,32; review 1,8 */
  clientCounts: number[];
  /** Modes: ms between two polls of GET /api/runs/{id} in the polling flows. @defaultValue 5 */
  pollMs: number;
  /** Modes: one API process without REDIS_URL that executes the runs itself (no redis-server, no workers). */
  embedded: boolean;
  /** Runs of each light-load batch (closed loop, see `lightClients`). @defaultValue 500 */
  lightRuns: number;
  /**
   * Client counts of the light-load batches (one batch each, after each configuration), each
   * client waiting for its run to end before the next POST. @defaultValue [1, 8]
   */
  lightClients: number[];
  /** Worker process counts to measure (modes: one count). @defaultValue [1, 2] (modes: [2]) */
  workers: number[];
  /** WORKER_CONCURRENCY values to measure (jobs per worker process; modes: one value). @defaultValue [8] */
  concurrency: number[];
  /** Passes over every configuration; the median pass (by runs/s) is reported. @defaultValue 1 */
  repeats: number;
  /** Profile: `--cpu-prof` on the API and workers, and Redis commands counted with MONITOR. */
  profile: boolean;
  /** Write the section of BENCHMARKS.md (off with `--no-write`, and when profiling). */
  write: boolean;
  /** The whole benchmark is stopped (exit 2) past this. @defaultValue 900 (modes: 300) */
  limitSec: number;
  /**
   * Throughput on a private redis-server and then on a Redis Cluster of six (3 masters, 3
   * replicas), same configurations, same run; writes the section `## Redis Cluster`.
   */
  redisCluster: boolean;
}

const USAGE = `npm run bench:runs -- [--runs N] [--warmup N] [--clients N] [--light-runs N] [--light-clients 1,8]
                        [--workers 1,2] [--concurrency 8,16]
                        [--repeats N] [--profile] [--no-write] [--limit-sec S] [--redis-cluster]
npm run bench:runs -- --mode wait|review [--clients 1,8,32] [--runs N] [--warmup N] [--poll-ms MS]
                        [--workers N] [--concurrency N] [--embedded] [--no-write] [--limit-sec S]`;

const FLAGS = {
  mode: choice(['throughput', 'wait', 'review'] as const, 'throughput'),
  runs: count(5000),
  warmup: count(1000),
  clients: counts([]),
  pollMs: count(5),
  embedded: toggle(),
  lightRuns: count(500),
  lightClients: counts([1, 8]),
  workers: counts([1, 2]),
  concurrency: counts([8]),
  repeats: count(1),
  limitSec: count(900),
  profile: toggle(),
  noWrite: toggle(),
  redisCluster: toggle(),
};

/** The flags only one kind of run takes. */
const MODES_ONLY = ['pollMs', 'embedded'] as const;
const THROUGHPUT_ONLY = ['lightRuns', 'lightClients', 'repeats', 'profile', 'redisCluster'] as const;

const misplaced = (given: ReadonlySet<string>, keys: readonly string[]) => keys.filter((k) => given.has(k)).map(flagName);

export function parseOptions(argv: string[]): BenchOptions {
  const { flags: f, given } = parseFlags(argv, FLAGS, USAGE);
  const fail = (message: string): never => {
    throw new Error(`${message}\n${USAGE}`);
  };
  const options: BenchOptions = { ...f, clientCounts: f.clients, clients: 64, write: !f.noWrite };
  if (options.mode === 'throughput') {
    const wrong = misplaced(given, MODES_ONLY);
    if (wrong.length > 0) fail(`${wrong.join(', ')}: only with --mode wait or --mode review.`);
    if (options.clientCounts.length > 1) fail('--clients takes one number without --mode.');
    options.clients = options.clientCounts[0] ?? options.clients;
    options.clientCounts = [options.clients];
  } else {
    const wrong = misplaced(given, THROUGHPUT_ONLY);
    if (wrong.length > 0) fail(`${wrong.join(', ')}: not with --mode ${options.mode}.`);
    if (!given.has('runs')) options.runs = options.mode === 'wait' ? 500 : 300;
    if (!given.has('warmup')) options.warmup = options.mode === 'wait' ? 100 : 50;
    if (!given.has('clients')) options.clientCounts = options.mode === 'wait' ? [1, 8, 32] : [1, 8];
    if (!given.has('workers')) options.workers = [2];
    if (!given.has('limitSec')) options.limitSec = 300;
    if (options.workers.length > 1 || options.concurrency.length > 1) {
      fail(`--mode ${options.mode} measures one configuration: --workers and --concurrency take one number.`);
    }
    if (options.embedded && given.has('workers')) fail('--embedded starts no workers (the API executes the runs).');
  }
  if (options.profile && options.redisCluster) fail('--profile and --redis-cluster: one at a time.');
  if (options.profile) options.write = false;
  return options;
}
