import type { Measurement } from '../harness/measure.js';
import { commandLine, describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';
import { summarizeRounds, type Summary } from '../harness/rounds.js';
import { fixed, percentile } from '../harness/stats.js';
import { backendLabel, commandsLine, MEASUREMENT_HEADER, measurementColumns } from '../langgraph/rounds.js';
import type { LangGraphBackend } from '../langgraph/stack.js';
import { MODES, type ModeId } from './modes.js';
import type { SdkBenchOptions } from './options.js';

/** A subsection of "## LangGraph graphs": the writer finds it by this line and keeps the rest. */
export const SDK_SECTION: SectionPlace = { heading: '### LangGraph Server API (SDK) vs native routes', name: 'langgraph-sdk' };

/** Issue 27: the compatibility layer within this factor of the native routes' runs/s. */
export const GOAL_RATIO = 1.3;

/** Issue 33: a run on a stored assistant within this factor of the same run on the graph id. */
export const ASSISTANT_GOAL_RATIO = 1.1;

/**
 * The pairs compared, each with its goal: the native route and the SDK call doing the same run
 * (issue 27); a run on the graph id and the same run on a stored assistant of it (issue 33).
 */
const PAIRS: { native: ModeId; sdk: ModeId; goal: number }[] = [
  { native: 'native-wait', sdk: 'sdk-wait', goal: GOAL_RATIO },
  { native: 'native-wait', sdk: 'sdk-wait-thread', goal: GOAL_RATIO },
  { native: 'native-stream', sdk: 'sdk-stream', goal: GOAL_RATIO },
  { native: 'sdk-wait-thread', sdk: 'sdk-wait-assistant', goal: ASSISTANT_GOAL_RATIO },
];

/** One mode with one client count in one round. */
export interface SdkCell extends Measurement {
  backend: LangGraphBackend;
  mode: ModeId;
  clients: number;
  round: number;
}

const label = (mode: ModeId) => MODES.find((m) => m.id === mode)!.label;

function summarize(cells: SdkCell[], backend: LangGraphBackend, mode: ModeId, clients: number): Summary<SdkCell> | undefined {
  return summarizeRounds(cells.filter((c) => c.backend === backend && c.mode === mode && c.clients === clients));
}

/** One row per backend, client count and mode: median runs/s, the rounds, and the median round's details. */
export function table(cells: SdkCell[], o: SdkBenchOptions): string {
  const lines = [`| backend | clients | mode | ${MEASUREMENT_HEADER.titles}`, `|---|---:|---|${MEASUREMENT_HEADER.align}`];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      for (const mode of o.modes) {
        const s = summarize(cells, backend, mode, clients);
        if (s) lines.push(`| ${backendLabel(backend, o.workers)} | ${clients} | ${label(mode)} | ${measurementColumns(s)}`);
      }
    }
  }
  return lines.join('\n');
}

/** The first mode's runs/s over the second's (medians) per pair, backend and client count, and whether each is within its pair's goal. */
export function ratios(cells: SdkCell[], o: SdkBenchOptions): { line: string; met: boolean }[] {
  const out: { line: string; met: boolean }[] = [];
  for (const backend of o.backends) {
    for (const clients of o.clientCounts) {
      for (const pair of PAIRS) {
        const native = summarize(cells, backend, pair.native, clients);
        const sdk = summarize(cells, backend, pair.sdk, clients);
        if (!native || !sdk) continue;
        const ratio = native.median.runsPerSec / sdk.median.runsPerSec;
        const met = ratio <= pair.goal;
        out.push({
          met,
          line:
            `- ${backendLabel(backend, o.workers)}, ${clients} client${clients > 1 ? 's' : ''}, ${label(pair.sdk)} against ${label(pair.native)}: ` +
            `${fixed(native.median.runsPerSec, 0)} / ${fixed(sdk.median.runsPerSec, 0)} runs/s = **${fixed(ratio, 2)} ×** ` +
            `(goal ≤ ${pair.goal} ×: ${met ? 'met' : '**not met**'}); p50 ${fixed(percentile(native.median.latencyMs, 50), 1)} against ${fixed(percentile(sdk.median.latencyMs, 50), 1)} ms.`,
        });
      }
    }
  }
  return out;
}

/** Redis commands per run of each mode (the median round of the most clients), largest first. */
export function commandLines(cells: SdkCell[], o: SdkBenchOptions): string[] {
  const clients = Math.max(...o.clientCounts);
  return o.modes.flatMap((mode) => {
    const s = summarize(cells, 'redis', mode, clients);
    if (!s || s.median.commandsPerRun.length === 0) return [];
    return [commandsLine(label(mode), s.median.commandsPerRun, 12)];
  });
}

/** The generated block: command, machine, method, table, verdict, ratios and commands per run. */
export function section(cells: SdkCell[], m: Machine, o: SdkBenchOptions, command: string, source: string): string {
  const r = ratios(cells, o);
  const commands = commandLines(cells, o);
  const stacks = [
    o.backends.includes('embedded') ? `embedded: one API process without REDIS_URL (in-memory adapters) executes the runs itself (WORKER_CONCURRENCY ${o.concurrency})` : '',
    o.backends.includes('redis') ? `Redis: a private redis-server ${m.redis}, one API process and ${o.workers} worker process${o.workers > 1 ? 'es' : ''} (WORKER_CONCURRENCY ${o.concurrency})` : '',
  ].filter(Boolean);
  return generatedBlock(SDK_SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}; ${stacks.join('; ')}, started as bench:langgraph starts them (the echo graph as \`lg-echo\`); ` +
      'the benchmark shares these cores with them and with other users of the machine (load avg column).',
    '',
    'Each closed-loop client runs `lg-echo` to its end, the next run after the answer, in one of these modes: ' +
      'native POST /api/runs/wait `{agent_id, input, wait_ms}` and POST /api/runs/stream `{agent_id, input}` read to the end, with plain `fetch` ' +
      '(a new session each run); the SDK (`@langchain/langgraph-sdk` `Client`, one per closed-loop client, `maxRetries: 0`) ' +
      '`runs.wait(null, …)` (stateless: a thread created and removed per run), `runs.wait(threadId, …)` on a thread the client created once ' +
      '(no thread per run, so it does less than the native wait), the same on a stored assistant of the graph the client created once ' +
      '(`assistants.create` with a name, metadata and a `configurable` of its own: each run resolves it and runs under its config), ' +
      'and `runs.stream(null, …)` iterated to the end (stream mode `values`). ' +
      `A run counts when it answers the echoed values (native: \`completed\` with \`echoed: true\`; stream: the completed event / a values chunk with \`echoed: true\`). ` +
      `Per round, for each client count, every mode (in order in odd rounds, reversed in even ones): ${o.warmup} warm-up runs, then ${o.runs} measured; ` +
      `${o.rounds} rounds, the median round by runs/s reported (its latency, CPU and commands), with every round's runs/s. ` +
      'Redis commands per run: INFO commandstats before and after the measured runs (inside Lua included, the benchmark\'s INFO left out).',
    '',
    table(cells, o),
    '',
    `Goals: the SDK on the compatibility layer within ${GOAL_RATIO} × of the native routes' runs/s; a run on a stored assistant within ` +
      `${ASSISTANT_GOAL_RATIO} × of the same run on the graph id — ` +
      `${r.every((x) => x.met) ? '**met** in every configuration' : `**not met** in ${r.filter((x) => !x.met).length} of ${r.length} comparisons`}.`,
    '',
    ...r.map((x) => x.line),
    ...(commands.length ? ['', `Redis commands per run (${Math.max(...o.clientCounts)} clients, median round):`, '', ...commands] : []),
  ]);
}
