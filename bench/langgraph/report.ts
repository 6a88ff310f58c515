import { summarizeRounds, type Summary } from '../harness/rounds.js';
import { fixed, percentile } from '../harness/stats.js';
import type { Cell, InProcessCell } from './measure.js';
import type { LangGraphBenchOptions } from './options.js';
import { backendLabel, commandsLine, MEASUREMENT_HEADER, measurementColumns } from './rounds.js';
import type { LangGraphBackend } from './stack.js';
import { agentLabel, PAIRS, type AgentId, type Workload } from './workloads.js';

/**
 * The runs/s goal: the LangGraph graph served within this factor of LangGraph alone behind a bare
 * node:http server ({@link bareGoals}); the lines of {@link ratios} hold the served graph to the
 * same factor of the native agent, the former goal.
 */
export const GOAL_RATIO = 2;

/** A ratio line and whether it meets its goal. */
export interface GoalLine {
  line: string;
  met: boolean;
}

/**
 * The CPU goal: CPU per LangGraph run served within this factor of LangGraph alone behind a bare
 * node:http server ({@link bareGoals}); {@link cpuRatios} holds it to the same factor of LangGraph
 * in process (MemorySaver), the former goal.
 */
export const CPU_GOAL_RATIO = 1.5;

/** `runs/s`, `CPU ms/run`, … said of round trips for the approval rows. */
const perUnit = (text: string, workload: Workload): string =>
  workload === 'echo' ? text : text.replace(/\bruns\/s/g, 'round trips/s').replace(/\/run\b/g, '/round trip');

const plural = (clients: number) => `${clients} client${clients > 1 ? 's' : ''}`;

export function summarize(cells: Cell[], backend: LangGraphBackend, agent: AgentId, clients: number): Summary<Cell> | undefined {
  return summarizeRounds(cells.filter((c) => c.backend === backend && c.agent === agent && c.clients === clients));
}

/** One row per backend, client count and agent of `workload`: median runs/s (round trips/s), the rounds, and the median round's details. */
export function table(cells: Cell[], o: LangGraphBenchOptions, workload: Workload): string {
  const { native, graph } = PAIRS[workload];
  const lines = [`| backend | clients | agent | ${perUnit(MEASUREMENT_HEADER.titles, workload)}`, `|---|---:|---|${MEASUREMENT_HEADER.align}`];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      for (const id of [native, graph]) {
        const s = summarize(cells, backend, id, clients);
        if (s) lines.push(`| ${backendLabel(backend, o.workers)} | ${clients} | ${agentLabel(id)} | ${measurementColumns(s)}`);
      }
    }
  }
  return lines.join('\n');
}

/** Native runs/s over LangGraph runs/s (round trips/s for `approval`; medians) per backend and client count, and whether each is within the goal. */
export function ratios(cells: Cell[], o: LangGraphBenchOptions, workload: Workload): GoalLine[] {
  const { native: nativeId, graph: graphId, unit } = PAIRS[workload];
  const out: GoalLine[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const native = summarize(cells, backend, nativeId, clients);
      const graph = summarize(cells, backend, graphId, clients);
      if (!native || !graph) continue;
      const ratio = native.median.runsPerSec / graph.median.runsPerSec;
      const met = ratio <= GOAL_RATIO;
      out.push({
        met,
        line:
          `- ${backendLabel(backend, o.workers)}, ${plural(clients)}: native ${fixed(native.median.runsPerSec, 0)} ${unit}/s, ` +
          `LangGraph ${fixed(graph.median.runsPerSec, 0)} ${unit}/s: **${fixed(ratio, 2)} ×** (goal ≤ ${GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}); ` +
          `p50 ${fixed(percentile(native.median.latencyMs, 50), 1)} against ${fixed(percentile(graph.median.latencyMs, 50), 1)} ms.`,
      });
    }
  }
  return out;
}

/** `met`, or in how many of the configurations not. */
export const verdict = (lines: GoalLine[]): string =>
  lines.every((x) => x.met) ? '**met**' : `**not met** in ${lines.filter((x) => !x.met).length} of ${lines.length} configurations`;

/** The median over rounds of each round's CPU ms per run, every process of the backend together. */
function medianCpu(rounds: { cpuMsPerRun: { api: number; workers: number; redis: number } }[]): number {
  const totals = rounds.map(({ cpuMsPerRun: c }) => [c.api, c.workers, c.redis].filter(Number.isFinite).reduce((a, b) => a + b, 0)).sort((a, b) => a - b);
  return totals.length === 0 ? NaN : totals.length % 2 === 1 ? totals[(totals.length - 1) / 2]! : (totals[totals.length / 2 - 1]! + totals[totals.length / 2]!) / 2;
}

/** A workload's graph invoked in the benchmark's process with MemorySaver: one row per client count. */
export function inProcessTable(cells: InProcessCell[], o: LangGraphBenchOptions, workload: Workload): string {
  const head = '| in process | clients | runs/s (median) | rounds | p50 ms | p99 ms | CPU ms/run (median round by runs/s) | CPU ms/run (median over rounds) |';
  const lines = [perUnit(head, workload), '|---|---:|---:|---|---:|---:|---:|---:|'];
  for (const clients of o.clientCounts) for (const kind of [undefined, 'engine', 'bare'] as const) {
    const rounds = cells.filter((c) => c.workload === workload && c.clients === clients && c.kind === kind);
    const s = summarizeRounds(rounds);
    if (!s) continue;
    const m = s.median;
    const label =
      kind === 'engine'
        ? 'the engine, no HTTP (RunControl, embedded)'
        : kind === 'bare'
          ? 'LangGraph alone behind node:http (its own process)'
          : workload === 'echo'
            ? 'graph.invoke'
            : 'graph.invoke to the interrupt, then Command({resume})';
    lines.push(
      `| ${label} | ${clients} | ${fixed(m.runsPerSec, 0)}${s.failed ? ` (${s.failed} failed)` : ''} | ${s.rounds.map((r) => fixed(r, 0)).join(' · ')} | ` +
        `${fixed(percentile(m.latencyMs, 50), 1)} | ${fixed(percentile(m.latencyMs, 99), 1)} | ${fixed(m.cpuMsPerRun.api, 2)} | ${fixed(medianCpu(rounds), 2)} |`,
    );
  }
  return lines.join('\n');
}

/** The median CPU per run (round trip) of a workload's in-process rows of one kind (LangGraph alone: none), NaN when not measured. */
const inProcessCpu = (cells: InProcessCell[], workload: Workload, clients: number, kind?: InProcessCell['kind']): number =>
  medianCpu(cells.filter((c) => c.workload === workload && c.clients === clients && c.kind === kind));

/**
 * How a goal line ends, each when measured: the engine row's CPU (no HTTP, embedded only)
 * against LangGraph alone; LangGraph alone behind a bare node:http server against LangGraph
 * alone in process, and the served run (`ours`) against it.
 */
function floorNotes(backend: LangGraphBackend, inProcess: InProcessCell[], workload: Workload, clients: number, ours: number): string {
  const alone = inProcessCpu(inProcess, workload, clients);
  const engine = inProcessCpu(inProcess, workload, clients, 'engine');
  const bare = inProcessCpu(inProcess, workload, clients, 'bare');
  const notes = [
    ...(Number.isFinite(engine) && backend === 'embedded' ? [`the engine in process, no HTTP, ${fixed(engine, 2)} ms: ${fixed(engine / alone, 2)} × LangGraph alone`] : []),
    ...(Number.isFinite(bare)
      ? [`LangGraph alone behind a bare node:http server ${fixed(bare, 2)} ms (${fixed(bare / alone, 2)} × in process): served, ${fixed(ours / bare, 2)} × that`]
      : []),
  ];
  return notes.length > 0 ? `; ${notes.join('; ')}.` : '.';
}

/** CPU per LangGraph echo run (every process of the backend, median over rounds) over LangGraph's own in process, per backend and client count. */
export function cpuRatios(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions): GoalLine[] {
  const out: GoalLine[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const ours = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'lg-echo' && c.clients === clients));
      const alone = inProcessCpu(inProcess, 'echo', clients);
      const native = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'echo' && c.clients === clients));
      if (!Number.isFinite(ours) || !Number.isFinite(alone)) continue;
      const ratio = ours / alone;
      const met = ratio <= CPU_GOAL_RATIO;
      // A served run costs at least serving a run (the native echo's whole CPU: no graph code) and LangGraph's own.
      const floor = (native + alone) / alone;
      out.push({
        met,
        line:
          `- ${backendLabel(backend, o.workers)}, ${plural(clients)}: CPU per LangGraph echo run ${fixed(ours, 2)} ms ` +
          `(native echo ${fixed(native, 2)} ms), LangGraph in process ${fixed(alone, 2)} ms: **${fixed(ratio, 2)} ×** ` +
          `(goal ≤ ${CPU_GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}); the floor, serving a run (the native echo) and LangGraph alone, ` +
          `${fixed(floor, 2)} × (${floor > CPU_GOAL_RATIO ? '**above**' : 'below'} the goal)` +
          floorNotes(backend, inProcess, 'echo', clients, ours),
      });
    }
  }
  return out;
}

/**
 * The goals a LangGraph run is judged by: against LangGraph alone behind a bare node:http server
 * (the `bare` rows: the floor any server pays for the graph), per backend and client count. `rate`:
 * the bare server's runs/s (round trips/s) over the served graph's, within {@link GOAL_RATIO};
 * `cpu`: the served graph's CPU per run (every process of the backend) over the bare server's,
 * within {@link CPU_GOAL_RATIO}.
 */
export function bareGoals(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions, workload: Workload, kind: 'rate' | 'cpu'): GoalLine[] {
  const { graph: graphId, unit } = PAIRS[workload];
  const out: GoalLine[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const served = summarize(cells, backend, graphId, clients);
      const bare = summarizeRounds(inProcess.filter((c) => c.workload === workload && c.clients === clients && c.kind === 'bare'));
      if (!served || !bare) continue;
      const where = `- ${backendLabel(backend, o.workers)}, ${plural(clients)}: `;
      if (kind === 'rate') {
        const ratio = bare.median.runsPerSec / served.median.runsPerSec;
        const met = ratio <= GOAL_RATIO;
        out.push({
          met,
          line:
            where +
            `LangGraph alone behind node:http ${fixed(bare.median.runsPerSec, 0)} ${unit}/s, served ${fixed(served.median.runsPerSec, 0)} ${unit}/s: ` +
            `**${fixed(ratio, 2)} ×** (goal ≤ ${GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}); p50 ${fixed(percentile(bare.median.latencyMs, 50), 1)} against ${fixed(percentile(served.median.latencyMs, 50), 1)} ms.`,
        });
      } else {
        const ours = medianCpu(cells.filter((c) => c.backend === backend && c.agent === graphId && c.clients === clients));
        const alone = inProcessCpu(inProcess, workload, clients, 'bare');
        if (!Number.isFinite(ours) || !Number.isFinite(alone)) continue;
        const ratio = ours / alone;
        const met = ratio <= CPU_GOAL_RATIO;
        out.push({
          met,
          line:
            where +
            `CPU per ${workload === 'echo' ? 'run' : 'round trip'} served ${fixed(ours, 2)} ms, LangGraph alone behind node:http ${fixed(alone, 2)} ms: ` +
            `**${fixed(ratio, 2)} ×** (goal ≤ ${CPU_GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}).`,
        });
      }
    }
  }
  return out;
}

/**
 * What bounds the approval goal from below: LangGraph's own CPU per round trip in process (no
 * server, no storage) over the native human-review's whole CPU per round trip on the backend.
 * A LangGraph round trip served costs at least LangGraph's own; while CPU bounds the round
 * trips/s, a floor above the goal makes the goal unreachable by any server.
 */
export function approvalFloors(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions): GoalLine[] {
  const out: GoalLine[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const native = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'human-review' && c.clients === clients));
      const ours = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'lg-human-review' && c.clients === clients));
      const alone = inProcessCpu(inProcess, 'approval', clients);
      if (!Number.isFinite(native) || !Number.isFinite(alone)) continue;
      const floor = alone / native;
      const met = floor <= GOAL_RATIO;
      out.push({
        met,
        line:
          `- ${backendLabel(backend, o.workers)}, ${plural(clients)}: LangGraph alone in process ${fixed(alone, 2)} ms CPU per round trip, ` +
          `the native human-review served ${fixed(native, 2)} ms, the LangGraph one served ${fixed(ours, 2)} ms: LangGraph alone is ` +
          `**${fixed(floor, 2)} ×** the native round trip (${met ? 'below' : '**above**'} the goal of ${GOAL_RATIO} ×); served, ${fixed(ours / alone, 2)} × LangGraph alone` +
          floorNotes(backend, inProcess, 'approval', clients, ours),
      });
    }
  }
  return out;
}

/** Redis commands per run (approval: per round trip) of each agent measured (the median round of the most clients), largest first. */
export function commandLines(cells: Cell[], o: LangGraphBenchOptions): string[] {
  const clients = Math.max(...o.clientCounts);
  return o.workloads.flatMap((workload) => {
    const { native, graph } = PAIRS[workload];
    return [native, graph].flatMap((id) => {
      const s = summarize(cells, 'redis', id, clients);
      if (!s || s.median.commandsPerRun.length === 0) return [];
      return [commandsLine(workload === 'echo' ? agentLabel(id) : `${agentLabel(id)}, per round trip`, s.median.commandsPerRun)];
    });
  });
}
