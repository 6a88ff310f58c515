import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config.js';
import type { StoredEvent } from '../../src/domain/types.js';
import { bootProcess } from '../../src/main/process.js';
import type { Composition } from '../../src/main/compose.js';
import { measureClosedLoop } from '../harness/measure.js';
import { THIS_PROCESS, type InProcessCell } from './measure.js';
import type { Workload } from './workloads.js';

const LANGGRAPH_JSON = fileURLToPath(new URL('./langgraph.json', import.meta.url));
const TENANT = 'default';
const WAIT_MS = 30_000;

/**
 * The embedded composition, booted once in the benchmark's own process (its config given, not
 * read from the environment, so the processes the benchmark starts later see nothing of it):
 * the LangGraph engine driven through RunControl with no HTTP in between, for the rows of
 * {@link measureEngineInProcess}. Closed by {@link closeEngineInProcess}.
 */
let booted: Promise<{ composition: Composition; next: (runId: string, types: readonly string[]) => Promise<StoredEvent> }> | undefined;

function boot() {
  booted ??= (async () => {
    const config = loadConfig({ SERVICE_LANGGRAPH_JSON: LANGGRAPH_JSON, LOG_LEVEL: 'warn', SERVICE_RATE_LIMIT: 'off' });
    const composition = await bootProcess({ config });
    composition.startExecuting();
    // The next event of a run among `types`, by run id: one subscription for every waiter.
    const waiting = new Map<string, { types: readonly string[]; resolve: (event: StoredEvent) => void }>();
    composition.backend.events.subscribe(TENANT, (event) => {
      const waiter = waiting.get(event.event.run_id);
      if (waiter?.types.includes(event.event.type)) {
        waiting.delete(event.event.run_id);
        waiter.resolve(event);
      }
    });
    const next = (runId: string, types: readonly string[]) =>
      new Promise<StoredEvent>((resolve, reject) => {
        const timer = setTimeout(() => waiting.delete(runId) && reject(new Error(`run ${runId}: no ${types.join(' or ')} within ${WAIT_MS} ms`)), WAIT_MS);
        waiting.set(runId, { types, resolve: (event) => (clearTimeout(timer), resolve(event)) });
      });
    return { composition, next };
  })();
  return booted;
}

/**
 * The same graph served without HTTP: `warmup` then `runs` LangGraph runs (echo) or round trips
 * (approval: the human-review graph to its interrupt, the approval answered through
 * RunControl.answerApproval, to `completed`) started through the embedded composition's
 * RunControl by `clients` concurrent loops in this process, each waiting on the run's events;
 * CPU per run is this process's. What the engine and the run lifecycle cost around LangGraph,
 * measured as LangGraph alone is (same process, same loops, no client on the other core).
 */
export async function measureEngineInProcess(workload: Workload, clients: number, round: number, warmup: number, runs: number): Promise<InProcessCell> {
  const { composition, next } = await boot();
  const ended = ['completed', 'failed', 'cancelled'] as const;
  const measured = await measureClosedLoop(THIS_PROCESS, clients, warmup, runs, async (i) => {
    const sent = performance.now();
    if (workload === 'echo') {
      const { run_id } = await composition.runs.startRun(TENANT, { agent_id: 'lg-echo', graph: { input: { message: `run ${i}` } } });
      const end = await next(run_id, ended);
      return end.event.type === 'completed' ? performance.now() - sent : `engine in process: lg-echo ended ${end.event.type}: ${end.event.error ?? ''}`;
    }
    const { run_id } = await composition.runs.startRun(TENANT, { agent_id: 'lg-human-review', graph: { input: { topic: `review ${i}` } } });
    const paused = await next(run_id, ['interrupted', ...ended]);
    if (paused.event.type !== 'interrupted' || !paused.event.approval_id) return `engine in process: lg-human-review stopped ${paused.event.type}`;
    const done = next(run_id, ended);
    await composition.runs.answerApproval(TENANT, paused.event.approval_id, { approved: true, decided_by: 'bench' });
    const end = await done;
    return end.event.type === 'completed' ? performance.now() - sent : `engine in process: the resumed review ended ${end.event.type}: ${end.event.error ?? ''}`;
  });
  return { workload, clients, round, ...measured };
}

/** Stops the composition {@link measureEngineInProcess} booted, if it did. */
export async function closeEngineInProcess(): Promise<void> {
  if (!booted) return;
  const { composition } = await booted;
  booted = undefined;
  await composition.close();
}
