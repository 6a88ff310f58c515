import type { LangGraphBackend } from '../langgraph/options.js';
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

const USAGE = `npm run bench:langgraph-sdk -- [--runs N] [--warmup N] [--rounds N] [--clients 1,8]
                                 [--backends embedded,redis] [--modes ${MODES.map((m) => m.id).join(',')}]
                                 [--workers N] [--concurrency N] [--no-write] [--limit-sec S]`;

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer, got "${raw}".\n${USAGE}`);
  return value;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T[] {
  const parts = (raw ?? '').split(',');
  if (parts.some((p) => !allowed.includes(p as T))) throw new Error(`--${name} takes ${allowed.join(', ')}, got "${raw}".\n${USAGE}`);
  return [...new Set(parts as T[])];
}

export function parseOptions(argv: string[]): SdkBenchOptions {
  const options: SdkBenchOptions = {
    runs: 200,
    warmup: 40,
    rounds: 3,
    clientCounts: [1, 8],
    backends: ['embedded', 'redis'],
    modes: MODES.map((m) => m.id),
    workers: 1,
    concurrency: 8,
    write: true,
    limitSec: 900,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    const value = () => argv[++i];
    switch (flag) {
      case '--runs': options.runs = positive('runs', value()); break;
      case '--warmup': options.warmup = positive('warmup', value()); break;
      case '--rounds': options.rounds = positive('rounds', value()); break;
      case '--clients': options.clientCounts = (value() ?? '').split(',').map((part) => positive('clients', part)); break;
      case '--backends': options.backends = oneOf('backends', value(), ['embedded', 'redis'] as const); break;
      case '--modes': options.modes = oneOf('modes', value(), MODES.map((m) => m.id)); break;
      case '--workers': options.workers = positive('workers', value()); break;
      case '--concurrency': options.concurrency = positive('concurrency', value()); break;
      case '--limit-sec': options.limitSec = positive('limit-sec', value()); break;
      case '--no-write': options.write = false; break;
      default: throw new Error(`Unknown argument "${flag}".\n${USAGE}`);
    }
  }
  return options;
}
