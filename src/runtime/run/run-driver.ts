import type { Logger } from 'pino';
import { isUnavailable, tryExpected } from '../../domain/errors.js';
import { errorMessage, type Checkpoint, type Run, type RunJob } from '../../domain/types.js';
import { isGraphAgent, type Agent } from '../agent.js';
import type { RunJournal } from '../../ports/run-journal.js';
import type { Store } from '../../ports/store.js';
import type { RunLifecycle } from '../run-lifecycle.js';
import type { RunSignals } from '../run-signals.js';
import { tracer } from '../../observability/tracer.js';
import { RunAttempt } from './run-attempt.js';
import type { RunEngines } from './run-engine.js';
import { tracedAttempt } from './run-trace.js';

export interface RunDriverOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  /** The run path: taking a run, recording each step (one round trip each on Redis). */
  journal: RunJournal;
  lifecycle: RunLifecycle;
  signals: RunSignals;
  logger: Logger;
  /** The agents by id (the registry's): a job's agent is resolved once, here, and handed to its engine. */
  agents: { get(id: string): Agent | undefined };
  /** The engines by the kind of agent they run. */
  engines: RunEngines;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/** Executes one run job; resolves with the run as the job left it, or undefined when it did not run it. */
export type Execute = (job: RunJob) => Promise<Run | undefined>;

/**
 * Executes run jobs, whatever the agent's kind: takes the run (running, from queued, or running
 * when its job is re-delivered after a crash: the engine goes on from the latest checkpoint),
 * opens its abort signal, and hands the agent's engine a {@link RunAttempt}. A job for a run
 * already ended, or gone, is ignored (runs are at-least-once). Whatever goes wrong outside the
 * engine's own handling ends the run `failed`, except an infrastructure failure (Redis
 * unreachable), which the queue retries.
 */
export function createRunDriver(options: RunDriverOptions): Execute {
  const { journal, lifecycle, signals, logger } = options;
  const deps = { store: options.store, journal, lifecycle, logger, clock: options.clock ?? Date.now };

  return function execute(job: RunJob): Promise<Run | undefined> {
    const traces = tracer();
    return traces ? tracedAttempt(traces, job, () => run(job)) : run(job);
  };

  async function run(job: RunJob): Promise<Run | undefined> {
    const agent = options.agents.get(job.agent_id);
    const drive = driverOf(options.engines, agent);
    // A native checkpoint names the one node to run next: taking the run announces it. A graph
    // announces the tasks it plans itself.
    const taken = await take(job, agent !== undefined && !isGraphAgent(agent));
    if (!taken) return undefined;
    const controller = signals.open(taken.run.id);
    const attempt = new RunAttempt(deps, job, taken.run, controller.signal, taken.checkpoint);
    try {
      if (!drive) return await attempt.fail(`Agent "${job.agent_id}" is not registered on this worker.`);
      return await drive(attempt);
    } catch (error) {
      if (isUnavailable(error)) throw error;
      logger.error({ err: error, run_id: taken.run.id }, 'run failed outside its nodes');
      return attempt.fail(errorMessage(error));
    } finally {
      signals.release(taken.run.id, controller);
    }
  }

  /** The run taken (and its session's next node announced when `announce`), or undefined when it is not to run. */
  async function take(job: RunJob, announce: boolean): Promise<{ run: Run; checkpoint?: Checkpoint } | undefined> {
    const begun = await tryExpected(journal.begin(job.tenant, { id: job.run_id, session_id: job.session_id, agent_id: job.agent_id }, { announce }), 'conflict', 'not_found');
    // Ended (or taken back) meanwhile, or deleted: nothing to run.
    if (!begun.ok) return undefined;
    if (begun.value.published) lifecycle.counted([begun.value.published]);
    return begun.value;
  }
}

/** How the engine of `agent`'s kind drives an attempt of it; undefined for no agent, or no engine of its kind here. */
function driverOf(engines: RunEngines, agent: Agent | undefined): ((attempt: RunAttempt) => Promise<Run | undefined>) | undefined {
  if (agent === undefined) return undefined;
  if (!isGraphAgent(agent)) return (attempt) => engines.native.drive(attempt, agent);
  const { graph } = engines;
  return graph && ((attempt) => graph.drive(attempt, agent));
}
