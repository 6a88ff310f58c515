import { call, type TestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { compose } from '../../src/main/compose.js';
import { createLogger } from '../../src/main/logger.js';
import type { AgentRegistry } from '../../src/runtime/registry.js';

/** Sessions the seeding left behind, with checkpoints; the review ones have a pending approval. */
export interface Seeded {
  sessions: string[];
  approvals: string[];
}

/**
 * Real data through the API: three `echo` runs to completion and two `human-review` runs up to
 * their pending approval, executed by an executor on a second backend of the same store. The
 * executor stops before fuzzing starts, so nothing changes behind a snapshot's back; runs the
 * fuzzer starts stay queued.
 */
export async function seedRuns(api: TestApi, agents: AgentRegistry): Promise<Seeded> {
  const executing = compose(api.config, { logger: createLogger('silent'), agents, defaultMetrics: false });
  executing.startExecuting();
  try {
    const start = async (agent_id: string, session_id: string, input: Record<string, unknown>) => {
      const response = await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id, session_id, input } });
      if (response.status !== 202) throw new Error(`seeding ${agent_id}: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body as { run_id: string; session_id: string };
    };
    const status = async (runId: string) => (await call(`${api.url}/api/runs/${runId}`)).body?.status as string | undefined;
    const echoes = await Promise.all([1, 2, 3].map((i) => start('echo', `fuzz-echo-${i}`, { message: `hello ${i}`, i })));
    const reviews = await Promise.all([1, 2].map((i) => start('human-review', `fuzz-review-${i}`, { topic: `topic ${i}` })));
    for (const run of echoes) await waitFor(`seeded run ${run.run_id} completed`, async () => (await status(run.run_id)) === 'completed');
    for (const run of reviews) await waitFor(`seeded run ${run.run_id} interrupted`, async () => (await status(run.run_id)) === 'interrupted');
    const pending = (await call(`${api.url}/api/approval/pending`)).body as { pending: { id: string }[] };
    return { sessions: [...echoes, ...reviews].map((r) => r.session_id), approvals: pending.pending.map((a) => a.id) };
  } finally {
    await executing.close();
  }
}
