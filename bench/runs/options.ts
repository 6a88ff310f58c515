/** Settings of `npm run bench:runs`, from `--name value` arguments. */
export interface BenchOptions {
  /** Measured runs per configuration. @defaultValue 5000 */
  runs: number;
  /** Runs fired (and awaited) before each measured batch, not counted. @defaultValue 1000 */
  warmup: number;
  /** POST /api/runs requests in flight at most. @defaultValue 64 */
  clients: number;
  /** Runs of the light-load latency batch (closed loop, see `lightClients`). @defaultValue 500 */
  lightRuns: number;
  /** Clients of the light-load batch, each waiting for its run to end before the next POST. @defaultValue 8 */
  lightClients: number;
  /** Worker process counts to measure. @defaultValue [1, 2] */
  workers: number[];
  /** WORKER_CONCURRENCY values to measure (jobs per worker process). @defaultValue [8] */
  concurrency: number[];
  /** Passes over every configuration; the median pass (by runs/s) is reported. @defaultValue 1 */
  repeats: number;
  /** Profile: `--cpu-prof` on the API and workers, and Redis commands counted with MONITOR. */
  profile: boolean;
  /** Write the `## Runs` section of BENCHMARKS.md (off with `--no-write`, and when profiling). */
  write: boolean;
  /** The whole benchmark is stopped (exit 2) past this. @defaultValue 900 */
  limitSec: number;
}

const USAGE = `npm run bench:runs -- [--runs N] [--warmup N] [--clients N] [--light-runs N] [--light-clients N]
                        [--workers 1,2] [--concurrency 8,16]
                        [--repeats N] [--profile] [--no-write] [--limit-sec S]`;

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer, got "${raw}".\n${USAGE}`);
  return value;
}

const list = (name: string, raw: string | undefined) => (raw ?? '').split(',').map((part) => positive(name, part));

export function parseOptions(argv: string[]): BenchOptions {
  const options: BenchOptions = {
    runs: 5000,
    warmup: 1000,
    clients: 64,
    lightRuns: 500,
    lightClients: 8,
    workers: [1, 2],
    concurrency: [8],
    repeats: 1,
    profile: false,
    write: true,
    limitSec: 900,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    const value = () => argv[++i];
    switch (flag) {
      case '--runs': options.runs = positive('runs', value()); break;
      case '--warmup': options.warmup = positive('warmup', value()); break;
      case '--clients': options.clients = positive('clients', value()); break;
      case '--light-runs': options.lightRuns = positive('light-runs', value()); break;
      case '--light-clients': options.lightClients = positive('light-clients', value()); break;
      case '--workers': options.workers = list('workers', value()); break;
      case '--concurrency': options.concurrency = list('concurrency', value()); break;
      case '--repeats': options.repeats = positive('repeats', value()); break;
      case '--limit-sec': options.limitSec = positive('limit-sec', value()); break;
      case '--profile': options.profile = true; break;
      case '--no-write': options.write = false; break;
      default: throw new Error(`Unknown argument "${flag}".\n${USAGE}`);
    }
  }
  if (options.profile) options.write = false;
  return options;
}
