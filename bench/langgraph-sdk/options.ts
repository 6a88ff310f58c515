import { choices, count, counts, parseFlags, toggle } from '../harness/args.js';
import { BACKENDS, type LangGraphBackend } from '../langgraph/stack.js';
import { MODES, type ModeId } from './modes.js';

/** Settings of `npm run bench:langgraph-sdk`, from `--name value` arguments. */
export interface SdkBenchOptions {
  /** Measured runs per mode, client count and round. @defaultValue 200 */
  runs: number;
  /** Runs before each measured batch, not counted. @defaultValue 40 */
  warmup: number;
  /** Rounds over every mode and client count; medians over rounds are reported. @defaultValue 3 */
  rounds: number;
  /** Closed-loop client counts. @defaultValue [1, 8] */
  clientCounts: number[];
  /** Backends measured, one after the other. @defaultValue ['embedded', 'redis'] */
  backends: LangGraphBackend[];
  /** Modes measured, in this order within a round (reversed in even rounds). @defaultValue every mode */
  modes: ModeId[];
  /** Redis: worker processes beside the API. @defaultValue 1 */
  workers: number;
  /** WORKER_CONCURRENCY (jobs per worker process; embedded: of the API process). @defaultValue 8 */
  concurrency: number;
  /** Write the section of BENCHMARKS.md (off with `--no-write`). */
  write: boolean;
  /** The whole benchmark is stopped (exit 2) past this. @defaultValue 900 */
  limitSec: number;
}

const MODE_IDS = MODES.map((m) => m.id);

const USAGE = `npm run bench:langgraph-sdk -- [--runs N] [--warmup N] [--rounds N] [--clients 1,8]
                                 [--backends embedded,redis] [--modes ${MODE_IDS.join(',')}]
                                 [--workers N] [--concurrency N] [--no-write] [--limit-sec S]`;

const FLAGS = {
  runs: count(200),
  warmup: count(40),
  rounds: count(3),
  clients: counts([1, 8]),
  backends: choices(BACKENDS, BACKENDS),
  modes: choices(MODE_IDS, MODE_IDS),
  workers: count(1),
  concurrency: count(8),
  limitSec: count(900),
  noWrite: toggle(),
};

export function parseOptions(argv: string[]): SdkBenchOptions {
  const { flags: f } = parseFlags(argv, FLAGS, USAGE);
  const { runs, warmup, rounds, backends, modes, workers, concurrency, limitSec } = f;
  return { runs, warmup, rounds, clientCounts: f.clients, backends, modes, workers, concurrency, write: !f.noWrite, limitSec };
}
