/** The columns the tables of the LangGraph benchmarks (bench:langgraph, bench:langgraph-sdk) share. */
import type { Measurement } from '../harness/measure.js';
import type { Summary } from '../harness/rounds.js';
import { fixed, percentile } from '../harness/stats.js';
import type { LangGraphBackend } from './stack.js';

export const totalCommands = (commands: [string, number][]): number => commands.reduce((sum, [, n]) => sum + n, 0);
export const backendLabel = (backend: LangGraphBackend, workers: number): string =>
  backend === 'embedded' ? 'embedded (memory)' : `Redis, API + ${workers} worker${workers > 1 ? 's' : ''}`;

/** The table header from `runs/s` on, after the columns that name the configuration. */
export const MEASUREMENT_HEADER = {
  titles: 'runs/s (median) | rounds | p50 ms | p99 ms | CPU ms/run: api · workers · redis | Redis commands/run | load avg |',
  align: '---:|---|---:|---:|---|---:|---|',
};

/** The columns of {@link MEASUREMENT_HEADER} for one summary: the median round's details and every round's runs/s. */
export function measurementColumns(s: Summary<Measurement>): string {
  const m = s.median;
  return (
    `${fixed(m.runsPerSec, 0)}${s.failed ? ` (${s.failed} failed)` : ''} | ` +
    `${s.rounds.map((r) => fixed(r, 0)).join(' · ')} | ${fixed(percentile(m.latencyMs, 50), 1)} | ${fixed(percentile(m.latencyMs, 99), 1)} | ` +
    `${fixed(m.cpuMsPerRun.api, 2)} · ${fixed(m.cpuMsPerRun.workers, 2)} · ${fixed(m.cpuMsPerRun.redis, 2)} | ` +
    `${m.commandsPerRun.length ? fixed(totalCommands(m.commandsPerRun), 1) : 'n/a'} | ${fixed(s.loadAvg[0], 1)}–${fixed(s.loadAvg[1], 1)} |`
  );
}

/** `- label: **total** — name n, …` for a median round's Redis commands per run, the first `most` names (all by default). */
export function commandsLine(label: string, commands: [string, number][], most = Infinity): string {
  const shown = commands.slice(0, most).map(([name, n]) => `${name} ${fixed(n, 1)}`).join(', ');
  return `- ${label}: **${fixed(totalCommands(commands), 1)}** — ${shown}${commands.length > most ? ', …' : ''}.`;
}
