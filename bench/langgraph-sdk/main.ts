import { benchCommand } from '../harness/args.js';
import { measureClosedLoop } from '../harness/measure.js';
import { sourceRevision, writeBlock } from '../harness/report.js';
import { inRoundOrder } from '../harness/rounds.js';
import { runBench, type BenchProcesses } from '../harness/run.js';
import { eachBackend, type Target } from '../langgraph/stack.js';
import { modeRunner } from './modes.js';
import { parseOptions, type SdkBenchOptions } from './options.js';
import { commandLines, ratios, SDK_SECTION, section, table, type SdkCell } from './report.js';

/**
 * `npm run bench:langgraph-sdk`: the echo graph (`lg-echo`) run by the LangGraph SDK's `Client`
 * (`runs.wait` stateless and on a thread, `runs.stream` stateless) against the same graph
 * through the native routes with plain fetch (POST /api/runs/wait, /api/runs/stream), with 1
 * and 8 closed-loop clients, embedded and on Redis, in the same processes bench:langgraph
 * starts: runs/s medians over rounds, native/SDK ratios against 1.3 ×, Redis commands per run.
 * See BENCHMARKS.md, section "LangGraph Server API (SDK) vs native routes".
 */
const argv = process.argv.slice(2);
const options = parseOptions(argv);
const command = benchCommand('bench:langgraph-sdk', argv);

/** Every round over every client count and mode, on one backend. */
async function measureBackend(target: Target, o: SdkBenchOptions, cells: SdkCell[]): Promise<void> {
  for (let round = 1; round <= o.rounds; round += 1) {
    for (const clients of o.clientCounts) {
      // Alternate the order, so no mode always runs on a warmer or a fuller process.
      for (const mode of inRoundOrder(round, o.modes)) {
        const runner = await modeRunner(target.apiUrl, mode, clients);
        try {
          const measured = await measureClosedLoop(target, clients, o.warmup, o.runs, runner.run);
          cells.push({ backend: target.backend, mode, clients, round, ...measured });
          console.log(
            `${target.backend} round ${round}, ${clients} client(s), ${mode}: ${measured.runsPerSec.toFixed(0)} runs/s` +
              `${measured.failed ? ` (${measured.failed} failed)` : ''}, load ${measured.loadAvg.toFixed(1)}`,
          );
        } finally {
          await runner.close();
        }
      }
    }
  }
}

async function main(processes: BenchProcesses, o: SdkBenchOptions): Promise<void> {
  const source = sourceRevision();
  const cells: SdkCell[] = [];
  console.log(`bench:langgraph-sdk: ${o.backends.join(', ')}; clients ${o.clientCounts.join(', ')}; modes ${o.modes.join(', ')}; ${o.rounds} rounds of ${o.runs} runs after ${o.warmup} warm-up; ${source}`);
  const m = await eachBackend(processes, o.backends, o, (target) => measureBackend(target, o, cells));
  console.log(`\n${table(cells, o)}\n\n${ratios(cells, o).map((r) => r.line).join('\n')}\n\n${commandLines(cells, o).join('\n')}`);
  if (o.write) writeBlock(SDK_SECTION, section(cells, m, o, command, source));
}

await runBench('bench:langgraph-sdk', options.limitSec, (processes) => main(processes, options));
