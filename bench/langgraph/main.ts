import { sourceRevision } from '../runs/report.js';
import { AGENTS, measureCell, measureInProcess, type Cell, type InProcessCell, type Target } from './measure.js';
import { parseOptions, type LangGraphBenchOptions } from './options.js';
import { commandLines, cpuRatios, inProcessTable, ratios, section, table, writeSection } from './report.js';
import { eachBackend, runBench, type LangGraphStacks } from './stack.js';

/**
 * `npm run bench:langgraph`: the `echo` graph of examples/langgraph beside the native `echo`,
 * through POST /api/runs/wait with 1 and 8 closed-loop clients, embedded (one API process in
 * memory) and on Redis (a private redis-server, one API process and worker processes), in the
 * same processes and the same run: runs/s medians over rounds, their ratio, and Redis commands
 * per run of each. See BENCHMARKS.md, section "LangGraph graphs".
 */
const options = parseOptions(process.argv.slice(2));
const command = ['npm run bench:langgraph', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');

/** Every round over every client count and both agents, on one backend. */
async function measureBackend(target: Target, o: LangGraphBenchOptions, cells: Cell[], inProcess: InProcessCell[]): Promise<void> {
  for (let round = 1; round <= o.rounds; round += 1) {
    for (const clients of o.clientCounts) {
      // Alternate which agent goes first, so neither always runs on a warmer or a fuller process.
      const agents = round % 2 === 1 ? AGENTS : [...AGENTS].reverse();
      for (const { id } of agents) {
        const cell = await measureCell(target, id, clients, round, o.warmup, o.runs);
        cells.push(cell);
        console.log(
          `${target.backend} round ${round}, ${clients} client(s), ${id}: ${cell.runsPerSec.toFixed(0)} runs/s` +
            `${cell.failed ? ` (${cell.failed} failed)` : ''}, load ${cell.loadAvg.toFixed(1)}`,
        );
      }
      // LangGraph alone (the same graph, MemorySaver, in this process), beside the first backend's cells.
      if (target.backend === o.backends[0]) {
        const cell = await measureInProcess(clients, round, o.warmup, o.runs);
        inProcess.push(cell);
        console.log(`in process round ${round}, ${clients} client(s), graph.invoke: ${cell.runsPerSec.toFixed(0)} runs/s, ${cell.cpuMsPerRun.api.toFixed(2)} CPU ms/run`);
      }
    }
  }
}

async function main(stacks: LangGraphStacks, o: LangGraphBenchOptions): Promise<void> {
  const source = sourceRevision();
  const cells: Cell[] = [];
  const inProcess: InProcessCell[] = [];
  console.log(`bench:langgraph: ${o.backends.join(', ')}; clients ${o.clientCounts.join(', ')}; ${o.rounds} rounds of ${o.runs} runs after ${o.warmup} warm-up; ${source}`);
  const m = await eachBackend(stacks, o.backends, o, (target) => measureBackend(target, o, cells, inProcess));
  console.log(
    `\n${table(cells, o)}\n\n${ratios(cells, o).map((r) => r.line).join('\n')}\n\n${inProcessTable(inProcess, o)}\n\n` +
      `${cpuRatios(cells, inProcess, o).map((r) => r.line).join('\n')}\n\n${commandLines(cells, o).join('\n')}`,
  );
  if (o.write) {
    writeSection(section(cells, inProcess, m, o, command, source));
    console.log('BENCHMARKS.md: section "## LangGraph graphs" updated.');
  }
}

await runBench('bench:langgraph', options.limitSec, (stacks) => main(stacks, options));
