import { markers, writeGeneratedSection } from '../benchmarks-md.js';
import { percentile } from '../runs/load.js';
import type { Machine } from '../runs/report.js';
import { AGENTS, type AgentId, type Cell, type InProcessCell } from './measure.js';
import type { LangGraphBackend, LangGraphBenchOptions } from './options.js';
import { backendLabel, commandsLine, fixed, MEASUREMENT_HEADER, measurementColumns, summarizeRounds, type Summary } from './rounds.js';

export const HEADING = '## LangGraph graphs';

/** The goal of issue 26: the LangGraph echo within this factor of the native echo's runs/s. */
export const GOAL_RATIO = 2;

/** The goal of issue 34: CPU per LangGraph echo run within this factor of LangGraph's own in process (MemorySaver). */
export const CPU_GOAL_RATIO = 1.5;

const label = (agent: AgentId) => AGENTS.find((a) => a.id === agent)!.label;

export function summarize(cells: Cell[], backend: LangGraphBackend, agent: AgentId, clients: number): Summary<Cell> | undefined {
  return summarizeRounds(cells.filter((c) => c.backend === backend && c.agent === agent && c.clients === clients));
}

/** One row per backend, client count and agent: median runs/s, the rounds, and the median round's details. */
export function table(cells: Cell[], o: LangGraphBenchOptions): string {
  const lines = [`| backend | clients | agent | ${MEASUREMENT_HEADER.titles}`, `|---|---:|---|${MEASUREMENT_HEADER.align}`];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      for (const { id } of AGENTS) {
        const s = summarize(cells, backend, id, clients);
        if (s) lines.push(`| ${backendLabel(backend, o.workers)} | ${clients} | ${label(id)} | ${measurementColumns(s)}`);
      }
    }
  }
  return lines.join('\n');
}

/** Native runs/s over LangGraph runs/s (medians) per backend and client count, and whether each is within the goal. */
export function ratios(cells: Cell[], o: LangGraphBenchOptions): { line: string; met: boolean }[] {
  const out: { line: string; met: boolean }[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const native = summarize(cells, backend, 'echo', clients);
      const graph = summarize(cells, backend, 'lg-echo', clients);
      if (!native || !graph) continue;
      const ratio = native.median.runsPerSec / graph.median.runsPerSec;
      const met = ratio <= GOAL_RATIO;
      out.push({
        met,
        line:
          `- ${backendLabel(backend, o.workers)}, ${clients} client${clients > 1 ? 's' : ''}: native ${fixed(native.median.runsPerSec, 0)} runs/s, ` +
          `LangGraph ${fixed(graph.median.runsPerSec, 0)} runs/s: **${fixed(ratio, 2)} ×** (goal ≤ ${GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}); ` +
          `p50 ${fixed(percentile(native.median.latencyMs, 50), 1)} against ${fixed(percentile(graph.median.latencyMs, 50), 1)} ms.`,
      });
    }
  }
  return out;
}

/** The median over rounds of each round's CPU ms per run, every process of the backend together. */
function medianCpu(rounds: { cpuMsPerRun: { api: number; workers: number; redis: number } }[]): number {
  const totals = rounds.map(({ cpuMsPerRun: c }) => [c.api, c.workers, c.redis].filter(Number.isFinite).reduce((a, b) => a + b, 0)).sort((a, b) => a - b);
  return totals.length === 0 ? NaN : totals.length % 2 === 1 ? totals[(totals.length - 1) / 2]! : (totals[totals.length / 2 - 1]! + totals[totals.length / 2]!) / 2;
}

/** The echo graph invoked in the benchmark's process with MemorySaver: one row per client count. */
export function inProcessTable(cells: InProcessCell[], o: LangGraphBenchOptions): string {
  const lines = ['| in process (MemorySaver) | clients | runs/s (median) | rounds | p50 ms | p99 ms | CPU ms/run (median round by runs/s) | CPU ms/run (median over rounds) |', '|---|---:|---:|---|---:|---:|---:|---:|'];
  for (const clients of o.clientCounts) {
    const rounds = cells.filter((c) => c.clients === clients);
    const s = summarizeRounds(rounds);
    if (!s) continue;
    const m = s.median;
    lines.push(
      `| graph.invoke | ${clients} | ${fixed(m.runsPerSec, 0)}${s.failed ? ` (${s.failed} failed)` : ''} | ${s.rounds.map((r) => fixed(r, 0)).join(' · ')} | ` +
        `${fixed(percentile(m.latencyMs, 50), 1)} | ${fixed(percentile(m.latencyMs, 99), 1)} | ${fixed(m.cpuMsPerRun.api, 2)} | ${fixed(medianCpu(rounds), 2)} |`,
    );
  }
  return lines.join('\n');
}

/** CPU per LangGraph echo run (every process of the backend, median over rounds) over LangGraph's own in process, per backend and client count. */
export function cpuRatios(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions): { line: string; met: boolean }[] {
  const out: { line: string; met: boolean }[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      const ours = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'lg-echo' && c.clients === clients));
      const alone = medianCpu(inProcess.filter((c) => c.clients === clients));
      const native = medianCpu(cells.filter((c) => c.backend === backend && c.agent === 'echo' && c.clients === clients));
      if (!Number.isFinite(ours) || !Number.isFinite(alone)) continue;
      const ratio = ours / alone;
      const met = ratio <= CPU_GOAL_RATIO;
      out.push({
        met,
        line:
          `- ${backendLabel(backend, o.workers)}, ${clients} client${clients > 1 ? 's' : ''}: CPU per LangGraph echo run ${fixed(ours, 2)} ms ` +
          `(native echo ${fixed(native, 2)} ms), LangGraph in process ${fixed(alone, 2)} ms: **${fixed(ratio, 2)} ×** ` +
          `(goal ≤ ${CPU_GOAL_RATIO} ×: ${met ? 'met' : '**not met**'}).`,
      });
    }
  }
  return out;
}

/** Redis commands per run of each agent (the median round of the most clients), largest first. */
export function commandLines(cells: Cell[], o: LangGraphBenchOptions): string[] {
  const clients = Math.max(...o.clientCounts);
  return AGENTS.flatMap(({ id }) => {
    const s = summarize(cells, 'redis', id, clients);
    if (!s || s.median.commandsPerRun.length === 0) return [];
    return [commandsLine(label(id), s.median.commandsPerRun)];
  });
}

function machineLine(m: Machine, o: LangGraphBenchOptions): string {
  const parts = [
    o.backends.includes('embedded') ? `embedded: one API process without REDIS_URL (in-memory adapters) executes the runs itself (WORKER_CONCURRENCY ${o.concurrency})` : '',
    o.backends.includes('redis')
      ? `Redis: a private redis-server ${m.redis}, one API process and ${o.workers} worker process${o.workers > 1 ? 'es' : ''} (WORKER_CONCURRENCY ${o.concurrency})`
      : '',
  ].filter(Boolean);
  return `Machine: ${m.cores} cores (${m.cpu}), ${m.memGiB} GiB, Node ${m.node}; ${parts.join('; ')}; the benchmark shares these cores with them and with other users of the machine (load avg column).`;
}

/** The generated block of the section: command, machine, method, table, ratios and commands per run. */
export function section(cells: Cell[], inProcess: InProcessCell[], m: Machine, o: LangGraphBenchOptions, command: string, source: string): string {
  const { begin, end } = markers('langgraph');
  const r = ratios(cells, o);
  const commands = commandLines(cells, o);
  const cpu = cpuRatios(cells, inProcess, o);
  return [
    begin,
    `Command: \`${command}\` (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${source}).`,
    '',
    machineLine(m, o),
    '',
    'Every process is started with `SERVICE_LANGGRAPH_JSON=bench/langgraph/langgraph.json`, which serves the `echo` graph of ' +
      '`examples/langgraph/echo.ts` (`receive` → `respond`, two nodes, as the built-in echo) as `lg-echo`, so the native `echo` ' +
      `and the graph run side by side in the same processes. Each client in a closed loop: POST /api/runs/wait ` +
      '`{agent_id, input: {message}}` (a new session each), the next after the answer (200 `completed` with `echoed: true`, ' +
      `else counted failed). Per round, for each client count, both agents (native first in odd rounds, LangGraph first in even ` +
      `ones): ${o.warmup} warm-up runs, then ${o.runs} measured; ${o.rounds} rounds, the median round by runs/s reported (its latency, CPU ` +
      'and commands), with every round\'s runs/s. runs/s: completed runs over first request → last answer; p50/p99: request ' +
      'sent → answer. Redis commands per run: INFO commandstats of the private redis-server before and after the measured runs ' +
      '(commands inside Lua scripts included, the benchmark\'s INFO left out), divided by the runs. SERVICE_RATE_LIMIT off, ' +
      'SERVICE_SSE_MAX_PER_PRINCIPAL/TENANT 0 (held waits count against them).',
    '',
    table(cells, o),
    '',
    `Goal: the LangGraph echo within ${GOAL_RATIO} × of the native echo's runs/s — ` +
      `${r.every((x) => x.met) ? '**met**' : `**not met** in ${r.filter((x) => !x.met).length} of ${r.length} configurations`}.`,
    '',
    ...r.map((x) => x.line),
    '',
    `LangGraph alone, for the ratio of CPU per run: after the agents of each client count (on the first backend), the same graph ` +
      '`.withConfig({})` with `checkpointer = new MemorySaver()` (a new one per batch), `graph.invoke({message})` on a fresh ' +
      '`thread_id` each, by as many concurrent loops in the benchmark\'s own process, warm-up and measured runs as above; its ' +
      'CPU per run is the benchmark process\'s (idle otherwise meanwhile). CPU per run compared: the median over rounds of API + ' +
      'workers + Redis CPU ms per run, against the median over rounds in process.',
    '',
    inProcessTable(inProcess, o),
    '',
    `Goal: CPU per LangGraph echo run within ${CPU_GOAL_RATIO} × of LangGraph's own in process — ` +
      `${cpu.every((x) => x.met) ? '**met**' : `**not met** in ${cpu.filter((x) => !x.met).length} of ${cpu.length} configurations`}.`,
    '',
    ...cpu.map((x) => x.line),
    ...(commands.length ? ['', `Redis commands per run (${Math.max(...o.clientCounts)} clients, median round):`, '', ...commands] : []),
    end,
  ].join('\n');
}

export function writeSection(body: string): void {
  writeGeneratedSection(HEADING, 'langgraph', body);
}
