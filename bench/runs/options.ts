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

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer, got "${raw}".\n${USAGE}`);
  return value;
}

const list = (name: string, raw: string | undefined) => (raw ?? '').split(',').map((part) => positive(name, part));

function mode(raw: string | undefined): BenchMode {
  if (raw === 'throughput' || raw === 'wait' || raw === 'review') return raw;
  throw new Error(`--mode needs throughput, wait or review, got "${raw}".\n${USAGE}`);
}

export function parseOptions(argv: string[]): BenchOptions {
  const options: BenchOptions = {
    mode: 'throughput',
    runs: 5000,
    warmup: 1000,
    clients: 64,
    clientCounts: [],
    pollMs: 5,
    embedded: false,
    lightRuns: 500,
    lightClients: [1, 8],
    workers: [1, 2],
    concurrency: [8],
    repeats: 1,
    profile: false,
    write: true,
    limitSec: 900,
    redisCluster: false,
  };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    const value = () => argv[++i];
    given.add(flag);
    switch (flag) {
      case '--mode': options.mode = mode(value()); break;
      case '--runs': options.runs = positive('runs', value()); break;
      case '--warmup': options.warmup = positive('warmup', value()); break;
      case '--clients': options.clientCounts = list('clients', value()); break;
      case '--poll-ms': options.pollMs = positive('poll-ms', value()); break;
      case '--embedded': options.embedded = true; break;
      case '--light-runs': options.lightRuns = positive('light-runs', value()); break;
      case '--light-clients': options.lightClients = list('light-clients', value()); break;
      case '--workers': options.workers = list('workers', value()); break;
      case '--concurrency': options.concurrency = list('concurrency', value()); break;
      case '--repeats': options.repeats = positive('repeats', value()); break;
      case '--limit-sec': options.limitSec = positive('limit-sec', value()); break;
      case '--profile': options.profile = true; break;
      case '--no-write': options.write = false; break;
      case '--redis-cluster': options.redisCluster = true; break;
      default: throw new Error(`Unknown argument "${flag}".\n${USAGE}`);
    }
  }
  if (options.mode === 'throughput') {
    const misplaced = ['--poll-ms', '--embedded'].filter((f) => given.has(f));
    if (misplaced.length > 0) throw new Error(`${misplaced.join(', ')}: only with --mode wait or --mode review.\n${USAGE}`);
    if (options.clientCounts.length > 1) throw new Error(`--clients takes one number without --mode.\n${USAGE}`);
    options.clients = options.clientCounts[0] ?? options.clients;
    options.clientCounts = [options.clients];
  } else {
    const misplaced = ['--light-runs', '--light-clients', '--repeats', '--profile', '--redis-cluster'].filter((f) => given.has(f));
    if (misplaced.length > 0) throw new Error(`${misplaced.join(', ')}: not with --mode ${options.mode}.\n${USAGE}`);
    if (!given.has('--runs')) options.runs = options.mode === 'wait' ? 500 : 300;
    if (!given.has('--warmup')) options.warmup = options.mode === 'wait' ? 100 : 50;
    if (!given.has('--clients')) options.clientCounts = options.mode === 'wait' ? [1, 8, 32] : [1, 8];
    if (!given.has('--workers')) options.workers = [2];
    if (!given.has('--limit-sec')) options.limitSec = 300;
    if (options.workers.length > 1 || options.concurrency.length > 1) {
      throw new Error(`--mode ${options.mode} measures one configuration: --workers and --concurrency take one number.\n${USAGE}`);
    }
    if (options.embedded && given.has('--workers')) throw new Error(`--embedded starts no workers (the API executes the runs).\n${USAGE}`);
  }
  if (options.profile && options.redisCluster) throw new Error(`--profile and --redis-cluster: one at a time.\n${USAGE}`);
  if (options.profile) options.write = false;
  return options;
}
