import { benchCommand } from '../harness/args.js';
import { sourceRevision, writeBlock } from '../harness/report.js';
import { inRoundOrder } from '../harness/rounds.js';
import { runBench, type BenchProcesses } from '../harness/run.js';
import { measureBare } from './bare.js';
import { closeEngineInProcess, measureEngineInProcess } from './engine-in-process.js';
import { measureCell, measureInProcess, type Cell, type InProcessCell } from './measure.js';
import { parseOptions, type LangGraphBenchOptions } from './options.js';
import { approvalFloors, bareGoals, commandLines, cpuRatios, inProcessTable, ratios, table } from './report.js';
import { LANGGRAPH_SECTION, section } from './report-section.js';
import { eachBackend, startBare, type Target } from './stack.js';
import { PAIRS } from './workloads.js';

/**
 * `npm run bench:langgraph`: the `echo` graph of examples/langgraph beside the native `echo`,
 * through POST /api/runs/wait, and its `human-review` graph (an `interrupt()`) beside the native
 * `human-review` in approval round trips (POST /api/runs/wait, then POST /api/approval/respond),
 * with 1 and 8 closed-loop clients, embedded (one API process in memory) and on Redis (a private
 * redis-server, one API process and worker processes), in the same processes and the same run:
 * runs/s medians over rounds, their ratio, and Redis commands per run of each. See
 * BENCHMARKS.md, section "LangGraph graphs".
 */
const argv = process.argv.slice(2);
const options = parseOptions(argv);
const command = benchCommand('bench:langgraph', argv);

/** Every round over every client count, workload and its two agents, on one backend. */
async function measureBackend(target: Target, bare: Target, o: LangGraphBenchOptions, cells: Cell[], inProcess: InProcessCell[]): Promise<void> {
  for (let round = 1; round <= o.rounds; round += 1) {
    for (const clients of o.clientCounts) {
      for (const workload of o.workloads) {
        const { native, graph, unit } = PAIRS[workload];
        // Alternate which agent goes first, so neither always runs on a warmer or a fuller process.
        for (const id of inRoundOrder(round, [native, graph])) {
          const cell = await measureCell(target, id, clients, round, o.warmup, o.runs);
          cells.push(cell);
          console.log(
            `${target.backend} round ${round}, ${clients} client(s), ${id}: ${cell.runsPerSec.toFixed(0)} ${unit}/s` +
              `${cell.failed ? ` (${cell.failed} failed)` : ''}, load ${cell.loadAvg.toFixed(1)}`,
          );
        }
      }
      // LangGraph alone (each workload's graph, MemorySaver, in this process), beside the first backend's cells.
      if (target.backend === o.backends[0]) {
        for (const workload of o.workloads) {
          // LangGraph alone, the engine serving the same graph in this process (no HTTP) and LangGraph
          // alone behind a bare node:http server, alternating which goes first.
          for (const kind of inRoundOrder(round, ['alone', 'engine', 'bare'] as const)) {
            const cell =
              kind === 'engine'
                ? { ...(await measureEngineInProcess(workload, clients, round, o.warmup, o.runs)), kind }
                : kind === 'bare'
                  ? await measureBare(bare, workload, clients, round, o.warmup, o.runs)
                  : await measureInProcess(workload, clients, round, o.warmup, o.runs);
            inProcess.push(cell);
            console.log(`${kind === 'bare' ? 'node:http (own process)' : 'in process'} round ${round}, ${clients} client(s), ${workload} graph, ${kind}: ${cell.runsPerSec.toFixed(0)} ${PAIRS[workload].unit}/s, ${cell.cpuMsPerRun.api.toFixed(2)} CPU ms each`);
          }
        }
      }
    }
  }
}

async function main(processes: BenchProcesses, o: LangGraphBenchOptions): Promise<void> {
  const source = sourceRevision();
  const cells: Cell[] = [];
  const inProcess: InProcessCell[] = [];
  console.log(`bench:langgraph: ${o.workloads.join(', ')}; ${o.backends.join(', ')}; clients ${o.clientCounts.join(', ')}; ${o.rounds} rounds of ${o.runs} runs after ${o.warmup} warm-up; ${source}`);
  const bare = await startBare(processes);
  const m = await eachBackend(processes, o.backends, o, (target) => measureBackend(target, bare, o, cells, inProcess)).finally(closeEngineInProcess);
  const lines = (goals: { line: string }[]) => goals.map((g) => g.line).join('\n');
  for (const workload of o.workloads) {
    console.log(`\n${table(cells, o, workload)}\n\n${lines(ratios(cells, o, workload))}`);
    console.log(`\nAgainst LangGraph alone behind node:http:\n${lines(bareGoals(cells, inProcess, o, workload, 'rate'))}\n${lines(bareGoals(cells, inProcess, o, workload, 'cpu'))}`);
  }
  if (o.workloads.includes('echo')) console.log(`\n${inProcessTable(inProcess, o, 'echo')}\n\n${lines(cpuRatios(cells, inProcess, o))}`);
  if (o.workloads.includes('approval')) console.log(`\n${inProcessTable(inProcess, o, 'approval')}\n\n${lines(approvalFloors(cells, inProcess, o))}`);
  console.log(`\n${commandLines(cells, o).join('\n')}`);
  if (o.write) writeBlock(LANGGRAPH_SECTION, section(cells, inProcess, m, o, command, source));
}

await runBench('bench:langgraph', options.limitSec, (processes) => main(processes, options));
