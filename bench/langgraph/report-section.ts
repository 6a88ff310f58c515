import { commandLine, describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';
import type { Cell, InProcessCell } from './measure.js';
import type { LangGraphBenchOptions } from './options.js';
import { approvalFloors, bareGoals, commandLines, cpuRatios, CPU_GOAL_RATIO, GOAL_RATIO, inProcessTable, ratios, table, verdict } from './report.js';

export const LANGGRAPH_SECTION: SectionPlace = { heading: '## LangGraph graphs', name: 'langgraph' };

function machineLine(m: Machine, o: LangGraphBenchOptions): string {
  const parts = [
    o.backends.includes('embedded') ? `embedded: one API process without REDIS_URL (in-memory adapters) executes the runs itself (WORKER_CONCURRENCY ${o.concurrency})` : '',
    o.backends.includes('redis')
      ? `Redis: a private redis-server ${m.redis}, one API process and ${o.workers} worker process${o.workers > 1 ? 'es' : ''} (WORKER_CONCURRENCY ${o.concurrency})`
      : '',
  ].filter(Boolean);
  return `Machine: ${describeMachine(m)}; ${parts.join('; ')}; the benchmark shares these cores with them and with other users of the machine (load avg column).`;
}

function method(o: LangGraphBenchOptions): string {
  return (
    'Every process is started with `SERVICE_LANGGRAPH_JSON=bench/langgraph/langgraph.json`, which serves the graphs of ' +
    '`examples/langgraph/echo.ts` (`receive` → `respond`, two nodes, as the built-in echo) as `lg-echo` and ' +
    '`examples/langgraph/human-review.ts` (`write_draft` → `review`, an `interrupt()` → `publish` | `discard`, as the built-in ' +
    '`human-review`) as `lg-human-review`, so each native agent and its graph run side by side in the same processes. ' +
    'Each client in a closed loop (a new session per call), the next call after the answer, anything else counted failed. ' +
    `Per round, for each client count and workload, both agents (native first in odd rounds, LangGraph first in even ones): ` +
    `${o.warmup} warm-up calls, then ${o.runs} measured; ${o.rounds} rounds, the median round by runs/s reported (its latency, CPU ` +
    "and commands), with every round's runs/s. runs/s: completed calls over first request → last answer; p50/p99: a call's " +
    'first request sent → its last answer. Redis commands per run: INFO commandstats of the private redis-server before and ' +
    "after the measured calls (commands inside Lua scripts included, the benchmark's INFO left out), divided by the calls. " +
    'SERVICE_RATE_LIMIT off, SERVICE_SSE_MAX_PER_PRINCIPAL/TENANT 0 (held waits count against them).'
  );
}

/** What the engine rows of the in-process tables are. */
const ENGINE_ROW =
  "The engine rows: the same graph served by the embedded composition booted in the benchmark's own process (bench/langgraph/engine-in-process.ts): " +
  'runs (round trips: the approval answered through `RunControl.answerApproval`) started through `RunControl`, each loop waiting on its run\'s events, ' +
  'no HTTP and no client process beside it, measured as LangGraph alone is (same loops, same process, alternating which goes first): ' +
  'what the engine and the run lifecycle (run, session, journal steps, checkpoints, events) cost around LangGraph, apart from HTTP and the client.';

/** What the rows of LangGraph alone behind node:http are. */
const BARE_ROW =
  'The node:http rows: LangGraph alone behind a bare `node:http` server in its own process (bench/langgraph/bare-server.ts: the request read and ' +
  'parsed, the same graph invoked on a `MemorySaver`, its values answered as JSON; no framework, validation, storage or events), driven by ' +
  "the same closed-loop clients as the served rows, its process's CPU per run: what any HTTP server pays for these graphs. The in-process " +
  'loops above run a whole batch in one microtask drain (the event loop never turns); a server interleaves the runs with requests and ' +
  "sockets, which can make LangGraph's own work dearer (compare the rows per client count and per round: it varies with the batching).";

function echoPart(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions): string[] {
  const r = ratios(cells, o, 'echo');
  const cpu = cpuRatios(cells, inProcess, o);
  const rate = bareGoals(cells, inProcess, o, 'echo', 'rate');
  const cpuBare = bareGoals(cells, inProcess, o, 'echo', 'cpu');
  return [
    '### Echo runs',
    '',
    'One call: POST /api/runs/wait `{agent_id, input: {message}}`, answered 200 `completed` with `echoed: true`.',
    '',
    table(cells, o, 'echo'),
    '',
    `Goal: the LangGraph echo served within ${GOAL_RATIO} × of LangGraph alone behind a bare node:http server (the floor any server ` +
      `pays for the graph: the node:http rows below) in runs/s — ${verdict(rate)}.`,
    '',
    ...rate.map((x) => x.line),
    '',
    `Against the native echo (the former goal, the same factor; for reference) — ${verdict(r)}:`,
    '',
    ...r.map((x) => x.line),
    '',
    `LangGraph alone, for the ratio of CPU per run: after the agents of each client count (on the first backend), the same graph ` +
      '`.withConfig({})` with `checkpointer = new MemorySaver()` (a new one per batch), `graph.invoke({message})` on a fresh ' +
      "`thread_id` each, by as many concurrent loops in the benchmark's own process, warm-up and measured runs as above; its " +
      "CPU per run is the benchmark process's (idle otherwise meanwhile). CPU per run compared: the median over rounds of API + " +
      'workers + Redis CPU ms per run, against the median over rounds in process. A served LangGraph run costs at least what serving ' +
      "any run costs (the native echo's whole CPU: HTTP, run, session, checkpoint, events, no graph code) plus LangGraph's own: " +
      "the floor each line gives (a little high: the native echo's checkpoints and LangGraph's MemorySaver puts both count); " +
      'where it is well above the goal, no server of this design meets it.',
    '',
    ENGINE_ROW,
    '',
    BARE_ROW,
    '',
    inProcessTable(inProcess, o, 'echo'),
    '',
    `Goal: CPU per LangGraph echo run served within ${CPU_GOAL_RATIO} × of LangGraph alone behind node:http — ${verdict(cpuBare)}.`,
    '',
    ...cpuBare.map((x) => x.line),
    '',
    `Against LangGraph in process (the former goal, the same factor; for reference) — ${verdict(cpu)}:`,
    '',
    ...cpu.map((x) => x.line),
  ];
}

function approvalPart(cells: Cell[], inProcess: InProcessCell[], o: LangGraphBenchOptions): string[] {
  const r = ratios(cells, o, 'approval');
  const floors = approvalFloors(cells, inProcess, o);
  const rate = bareGoals(cells, inProcess, o, 'approval', 'rate');
  const cpuBare = bareGoals(cells, inProcess, o, 'approval', 'cpu');
  return [
    '### Approval round trips',
    '',
    'One round trip: POST /api/runs/wait `{agent_id, input: {topic}, wait_ms}`, held until the run pauses (200 `interrupted` ' +
      'with its pending `approval`), then POST /api/approval/respond `{id, approved: true, wait_ms}`, held until the resumed ' +
      'run stops (200 `approved` with `run` `completed`, `outcome: "published"`). The native `human-review` pauses in ' +
      "`ctx.interrupt`, the graph in LangGraph's `interrupt()` (its checkpoint saved, the run resumed with " +
      '`Command({resume: {approved, comment}})`). runs/s, CPU and commands are per round trip.',
    '',
    table(cells, o, 'approval'),
    '',
    `Goal: the LangGraph human-review served within ${GOAL_RATIO} × of LangGraph alone behind a bare node:http server (the ` +
      `node:http rows below) in round trips/s — ${verdict(rate)}.`,
    '',
    ...rate.map((x) => x.line),
    '',
    `Against the native human-review (the former goal, the same factor; for reference) — ${verdict(r)}:`,
    '',
    ...r.map((x) => x.line),
    '',
    'LangGraph alone, for what bounds that goal: the same graph `.withConfig({})` with `checkpointer = new MemorySaver()`, ' +
      '`graph.invoke({topic})` to its interrupt, then `graph.invoke(new Command({resume: {approved: true}}))` to `outcome: "published"`, ' +
      "on a fresh `thread_id` each, in the benchmark's own process as for the echo. A served round trip costs at least LangGraph's own, " +
      "so where LangGraph alone costs more than the goal's factor of the native round trip's whole CPU, no server meets the goal while CPU bounds round trips/s.",
    '',
    ENGINE_ROW,
    '',
    BARE_ROW,
    '',
    inProcessTable(inProcess, o, 'approval'),
    '',
    `Goal: CPU per LangGraph round trip served within ${CPU_GOAL_RATIO} × of LangGraph alone behind node:http — ${verdict(cpuBare)}.`,
    '',
    ...cpuBare.map((x) => x.line),
    '',
    'What bounds the goal against the native human-review:',
    '',
    ...floors.map((x) => x.line),
  ];
}

/** The generated block of the section: command, machine, method, then per workload its table and ratios, and commands per run. */
export function section(cells: Cell[], inProcess: InProcessCell[], m: Machine, o: LangGraphBenchOptions, command: string, source: string): string {
  const commands = commandLines(cells, o);
  return generatedBlock(LANGGRAPH_SECTION, [
    commandLine(command, source),
    '',
    machineLine(m, o),
    '',
    method(o),
    ...(o.workloads.includes('echo') ? ['', ...echoPart(cells, inProcess, o)] : []),
    ...(o.workloads.includes('approval') ? ['', ...approvalPart(cells, inProcess, o)] : []),
    ...(commands.length ? ['', `Redis commands per run or round trip (${Math.max(...o.clientCounts)} clients, median round):`, '', ...commands] : []),
  ]);
}
