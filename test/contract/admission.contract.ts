import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { DEFAULT_FAIR_SHARE, type FairShare, type TenantShare } from '../../src/domain/fair-share.js';
import type { RunJob } from '../../src/domain/types.js';
import type { RunConsumer, RunQueue } from '../../src/ports/run-queue.js';
import { waitFor } from '../support/wait.js';

/** A fresh queue and a consumer of it with `concurrency` slots, sharing them by `fairShare`. */
export type AdmissionFactory = (concurrency: number, fairShare: FairShare) => Promise<{ queue: RunQueue; consumer: RunConsumer }>;

/** A job of `tenant` whose run id starts with its label, so an order of deliveries reads as labels. */
const job = (tenant: string, label: string, overrides: Partial<RunJob> = {}): RunJob => ({
  kind: 'start',
  tenant,
  run_id: `${label}.${randomUUID()}`,
  session_id: randomUUID(),
  agent_id: 'echo',
  ...overrides,
});
const labelOf = (j: RunJob) => j.run_id.split('.')[0]!;

const fair = (tenants: Record<string, Partial<TenantShare>> = {}, defaults: Partial<TenantShare> = {}): FairShare => ({
  defaults: { ...DEFAULT_FAIR_SHARE.defaults, ...defaults },
  tenants,
});

/** Resolves when `release` is called; lets a test hold jobs inside the handler. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { opened, release };
}

/**
 * The admission rule of the RunQueue port (fair share between tenants), run against both
 * adapters: turn order, weights, caps, resumes first, withdrawal, no double admission.
 */
export function admissionContract(name: string, make: AdmissionFactory): void {
  describe(`RunQueue admission: ${name}`, () => {
    const setUp = async (concurrency: number, fairShare: FairShare = fair()) => {
      const { queue, consumer } = await make(concurrency, fairShare);
      onTestFinished(async () => {
        await consumer.close(2_000);
        await queue.close();
      });
      return { queue, consumer };
    };

    /** Enqueues the jobs before the consumer starts, then records the order of deliveries. */
    const deliveryOrder = async (concurrency: number, fairShare: FairShare, jobs: RunJob[]) => {
      const { queue, consumer } = await setUp(concurrency, fairShare);
      for (const j of jobs) await queue.enqueue(j);
      const seen: string[] = [];
      consumer.start(async (j) => void seen.push(labelOf(j)));
      await waitFor(`${jobs.length} deliveries`, () => seen.length >= jobs.length);
      return seen;
    };

    it('gives the slot to the tenants in turn, not in arrival order', async () => {
      const jobs = [job('a', 'a1'), job('a', 'a2'), job('a', 'a3'), job('a', 'a4'), job('b', 'b1'), job('b', 'b2'), job('c', 'c1')];
      expect(await deliveryOrder(1, fair(), jobs)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    });

    it('gives a tenant of weight 2 two jobs per turn', async () => {
      const jobs = [...['a1', 'a2', 'a3', 'a4'].map((l) => job('a', l)), ...['b1', 'b2', 'b3'].map((l) => job('b', l))];
      expect(await deliveryOrder(1, fair({ a: { weight: 2 } }), jobs)).toEqual(['a1', 'a2', 'b1', 'a3', 'a4', 'b2', 'b3']);
    });

    it('puts a resume before the starts waiting in its tenant, and after no other tenant', async () => {
      const jobs = [job('a', 'a1'), job('a', 'a2'), job('b', 'b1'), job('a', 'ar', { kind: 'resume', approval_id: 'x' })];
      expect(await deliveryOrder(1, fair(), jobs)).toEqual(['ar', 'b1', 'a1', 'a2']);
    });

    it('gives a tenant alone every slot', async () => {
      const { queue, consumer } = await setUp(3);
      const hold = gate();
      let running = 0;
      consumer.start(async () => {
        running += 1;
        await hold.opened;
      });
      for (let i = 0; i < 6; i += 1) await queue.enqueue(job('a', `a${i}`));
      await waitFor('three jobs running', () => running === 3);
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 3, running: 3 });
      hold.release();
    });

    it('keeps a tenant within its running cap and gives the other slots to the others', async () => {
      const { queue, consumer } = await setUp(3, fair({ a: { maxRunning: 1 } }));
      const hold = gate();
      const running: string[] = [];
      consumer.start(async (j) => {
        running.push(j.tenant);
        await hold.opened;
      });
      for (let i = 0; i < 3; i += 1) await queue.enqueue(job('a', `a${i}`));
      await queue.enqueue(job('b', 'b1'));
      await queue.enqueue(job('b', 'b2'));
      await waitFor('three jobs running', () => running.length === 3);
      expect(running.sort()).toEqual(['a', 'b', 'b']);
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 2, running: 1 });
      hold.release();
      await waitFor('all five jobs', () => running.length === 5);
    });

    it('refuses room past the queued cap with rate_limited and Retry-After, for that tenant only', async () => {
      const { queue } = await setUp(1, fair({ b: { maxQueued: 5 } }, { maxQueued: 2 }));
      await queue.checkRoom('a');
      await queue.enqueue(job('a', 'a1'));
      await queue.enqueue(job('a', 'a2'), { delayMs: 60_000 });
      const refused = await queue.checkRoom('a').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe('rate_limited');
      expect((refused as AppError).headers['Retry-After']).toMatch(/^\d+$/);
      await queue.checkRoom('b');
      for (let i = 0; i < 4; i += 1) await queue.enqueue(job('b', `b${i}`));
      await queue.checkRoom('b');
      await queue.enqueue(job('b', 'b4'));
      await expect(queue.checkRoom('b')).rejects.toMatchObject({ code: 'rate_limited' });
      expect(await queue.depths(10)).toEqual([
        { tenant: 'b', queued: 5, running: 0 },
        { tenant: 'a', queued: 2, running: 0 },
      ]);
    });

    it('takes a withdrawn run out of its turn and its count', async () => {
      const { queue, consumer } = await setUp(1);
      const gone = job('a', 'a1');
      const delayed = job('a', 'a3');
      for (const j of [gone, job('a', 'a2'), job('b', 'b1')]) await queue.enqueue(j);
      await queue.enqueue(delayed, { delayMs: 60_000 });
      expect((await queue.depth('a')).queued).toBe(3);
      await queue.withdraw({ tenant: 'a', id: gone.run_id });
      await queue.withdraw({ tenant: 'a', id: delayed.run_id });
      expect((await queue.depth('a')).queued).toBe(1);
      expect(await queue.hasLiveJob({ id: gone.run_id })).toBe(false);
      const seen: string[] = [];
      consumer.start(async (j) => void seen.push(labelOf(j)));
      await waitFor('two deliveries', () => seen.length === 2);
      expect(seen).toEqual(['a2', 'b1']);
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 0, running: 0 });
    });

    it('never admits a job twice: enqueued again while it runs, it is not delivered again', async () => {
      const { queue, consumer } = await setUp(2);
      const hold = gate();
      const once = job('a', 'once');
      const seen: string[] = [];
      consumer.start(async (j) => {
        seen.push(labelOf(j));
        if (j.run_id === once.run_id) await hold.opened;
      });
      await queue.enqueue(once);
      await waitFor('the job running', () => seen.length === 1);
      expect(await queue.hasLiveJob({ id: once.run_id })).toBe(true);
      await queue.enqueue({ ...once });
      const after = job('a', 'after');
      await queue.enqueue(after);
      await waitFor('the next job', () => seen.includes('after'));
      hold.release();
      await waitFor('the job released', async () => !(await queue.hasLiveJob({ id: once.run_id })));
      expect(seen).toEqual(['once', 'after']);
    });

    it('lets a delayed job wait its turn once due', async () => {
      const { queue, consumer } = await setUp(1);
      const seen: string[] = [];
      consumer.start(async (j) => void seen.push(labelOf(j)));
      const late = job('a', 'late');
      await queue.enqueue(late, { delayMs: 200 });
      expect(await queue.hasLiveJob({ id: late.run_id })).toBe(true);
      await waitFor('the delayed job', () => seen.length === 1);
      expect(seen).toEqual(['late']);
    });
  });
}
