/**
 * Rounds (passes) over a benchmark's configurations: the order alternates from one round to the
 * next, so that no side always runs on a warmer or a fuller process, and the median round is
 * reported with every round's figure beside it.
 */

/** `items` in odd rounds (1, 3, …), reversed in even ones. */
export const inRoundOrder = <T>(round: number, items: readonly T[]): T[] => (round % 2 === 1 ? [...items] : [...items].reverse());

/** The middle item by `key` (of an even count, the lower of the two middle ones). */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor((items.length - 1) / 2)]!;
}

/** The rounds of one configuration: the median round (by runs/s), every round's runs/s, their failures and load range. */
export interface Summary<T> {
  median: T;
  rounds: number[];
  failed: number;
  loadAvg: [number, number];
}

export function summarizeRounds<T extends { runsPerSec: number; failed: number; loadAvg: number }>(rounds: T[]): Summary<T> | undefined {
  if (rounds.length === 0) return undefined;
  const loads = rounds.map((c) => c.loadAvg);
  return {
    median: medianBy(rounds, (c) => c.runsPerSec),
    rounds: rounds.map((c) => c.runsPerSec),
    failed: rounds.reduce((n, c) => n + c.failed, 0),
    loadAvg: [Math.min(...loads), Math.max(...loads)],
  };
}
