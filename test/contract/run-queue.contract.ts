import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RunJob } from '../../src/domain/types.js';
import type { RunConsumer, RunQueue } from '../../src/ports/run-queue.js';
import { waitFor } from '../support/wait.js';

/** A fresh queue and a consumer of it executing at most `concurrency` jobs at once. */
export type QueueFactory = (concurrency: number) => Promise<{ queue: RunQueue; consumer: RunConsumer }>;

const job = (overrides: Partial<RunJob> = {}): RunJob => ({
  kind: 'start',
  tenant: 'acme',
  run_id: randomUUID(),
  session_id: randomUUID(),
  agent_id: 'echo',
  ...overrides,
});

/** How long a held job goes on after close() was called: what close must wait for. */
const RUNS_ON_MS = 50;

/** Resolves when `release` is called; lets a test hold jobs inside the handler. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { opened, release };
}

/**
 * The RunQueue port's behaviour, run against both adapters. `make` returns a fresh queue and
 * a consumer of it per test; the suite closes them.
 */
export function runQueueContract(name: string, make: QueueFactory): void {
  describe(`RunQueue contract: ${name}`, () => {
    const setUp = async (concurrency: number) => {
      const { queue, consumer } = await make(concurrency);
      onTestFinished(async () => {
        await consumer.close(2_000);
        await queue.close();
      });
      return { queue, consumer };
    };

    it('delivers the jobs enqueued before the consumer starts, with their data', async () => {
      const { queue, consumer } = await setUp(4);
      const jobs = [job(), job({ kind: 'resume', approval_id: 'a-1' })];
      for (const j of jobs) await queue.enqueue(j);
      const seen: RunJob[] = [];
      consumer.start(async (j) => void seen.push(j));
      await waitFor('both jobs', () => seen.length === 2);
      expect(seen.sort((a, b) => a.run_id.localeCompare(b.run_id))).toEqual(jobs.sort((a, b) => a.run_id.localeCompare(b.run_id)));
    });

    it('collapses a job enqueued twice while it waits into one delivery', async () => {
      // One at a time: jobs are delivered in order, so a second copy would come before `other`.
      const { queue, consumer } = await setUp(1);
      const once = job();
      const other = job();
      await queue.enqueue(once);
      await queue.enqueue({ ...once });
      await queue.enqueue(other);
      const seen: string[] = [];
      consumer.start(async (j) => void seen.push(j.run_id));
      await waitFor('the other job', () => seen.includes(other.run_id));
      expect(seen.filter((id) => id === once.run_id)).toEqual([once.run_id]);
    });

    it('keeps a resume of the same run apart from its start (job ids include the kind and approval)', async () => {
      const { queue, consumer } = await setUp(4);
      const start = job();
      const resume = { ...start, kind: 'resume' as const, approval_id: `${start.run_id}.2` };
      await queue.enqueue(start);
      await queue.enqueue(resume);
      const seen: RunJob[] = [];
      consumer.start(async (j) => void seen.push(j));
      await waitFor('both jobs', () => seen.length === 2);
      expect(seen.map((j) => j.kind).sort()).toEqual(['resume', 'start']);
    });

    it('runs at most `concurrency` jobs at once', async () => {
      const { queue, consumer } = await setUp(2);
      const hold = gate();
      let running = 0;
      let peak = 0;
      let done = 0;
      consumer.start(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await hold.opened;
        running -= 1;
        done += 1;
      });
      for (let i = 0; i < 5; i += 1) await queue.enqueue(job());
      await waitFor('two jobs running', () => running === 2);
      expect(running).toBe(2);
      hold.release();
      await waitFor('all five jobs', () => done === 5);
      expect(peak).toBe(2);
    });

    it('close stops taking jobs and waits for the running ones', async () => {
      const { queue, consumer } = await setUp(1);
      const hold = gate();
      const started: string[] = [];
      const finished: string[] = [];
      consumer.start(async (j) => {
        started.push(j.run_id);
        await hold.opened;
        finished.push(j.run_id);
      });
      const first = job();
      await queue.enqueue(first);
      await waitFor('the first job to start', () => started.length === 1);
      await queue.enqueue(job());
      // What had finished when close resolved: the running job, which goes on for a while after
      // close() was called (a close that does not wait for it resolves in that while).
      const finishedAtClose = consumer.close(10_000).then(() => [...finished]);
      setTimeout(() => hold.release(), RUNS_ON_MS);
      expect(await finishedAtClose, 'close resolved while a job was still running').toEqual([first.run_id]);
      expect(finished).toEqual([first.run_id]);
      expect(started).toEqual([first.run_id]);
    });
  });
}
