import { choices, parseFlags } from '../harness/args.js';
import { roundsFlags, roundsOptions, type RoundsOptions } from '../langgraph/options.js';
import { MODES, type ModeId } from './modes.js';

/** Settings of `npm run bench:langgraph-sdk` (runs 200, warm-up 40, limit 900 s), from `--name value` arguments. */
export interface SdkBenchOptions extends RoundsOptions {
  /** Modes measured, in this order within a round (reversed in even rounds). @defaultValue every mode */
  modes: ModeId[];
}

const MODE_IDS = MODES.map((m) => m.id);

const USAGE = `npm run bench:langgraph-sdk -- [--runs N] [--warmup N] [--rounds N] [--clients 1,8]
                                 [--backends embedded,redis] [--modes ${MODE_IDS.join(',')}]
                                 [--workers N] [--concurrency N] [--no-write] [--limit-sec S]`;

const FLAGS = { ...roundsFlags({ runs: 200, warmup: 40, limitSec: 900 }), modes: choices(MODE_IDS, MODE_IDS) };

export function parseOptions(argv: string[]): SdkBenchOptions {
  const { flags: f } = parseFlags(argv, FLAGS, USAGE);
  return { ...roundsOptions(f), modes: f.modes };
}
