import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_FAIR_SHARE, type FairShare, type TenantShare } from '../../src/domain/fair-share.js';
import type { RunJob } from '../../src/domain/types.js';
import type { AdmissionFactory } from './admission.contract.js';
import { waitFor } from '../support/wait.js';

/** The agent every test caps, and another one without a cap. */
const CAPPED = 'capped';
const FREE = 'free';

/** A job of `tenant` and `agent` whose run id starts with its label. */
const job = (tenant: string, label: string, agent = CAPPED): RunJob => ({
  kind: 'start',
  tenant,
  run_id: `${label}.${randomUUID()}`,
  session_id: randomUUID(),
  agent_id: agent,
});
const labelOf = (j: RunJob) => j.run_id.split('.')[0]!;

const caps = (agents: Record<string, number>, tenants: Record<string, Partial<TenantShare>> = {}): FairShare => ({
  defaults: DEFAULT_FAIR_SHARE.defaults,
  tenants,
  agents,
});

/**
 * The agent caps of the RunQueue port's admission rule, run against both adapters: a capped
 * agent's runs past its cap stay queued and take its slots in turn as its runs end, tenants in
 * turn; other agents' runs of the same tenant go past them; a withdrawn run gives its place back.
 * `agentDepths` reports a capped agent's runs admitted (not those handed its slot and still
 * waiting) and parked at its cap, and nothing without a capped agent.
 */
export function agentCapsContract(name: string, make: AdmissionFactory): void {
  describe(`RunQueue admission, agent caps: ${name}`, () => {
    /**
     * A queue and its consumer whose handler holds each job until the test ends it
     * (`finish(label)`), recording the order of starts and the most jobs of CAPPED at once.
     */
    const setUp = async (concurrency: number, fairShare: FairShare) => {
      const { queue, consumer } = await make(concurrency, fairShare);
      const started: string[] = [];
      const ends = new Map<string, () => void>();
      let capped = 0;
      let mostCapped = 0;
      const run = () =>
        consumer.start(async (j) => {
          const label = labelOf(j);
          if (j.agent_id === CAPPED) mostCapped = Math.max(mostCapped, (capped += 1));
          started.push(label);
          await new Promise<void>((resolve) => ends.set(label, resolve));
          if (j.agent_id === CAPPED) capped -= 1;
        });
      onTestFinished(async () => {
        for (const end of ends.values()) end();
        await consumer.close(2_000);
        await queue.close();
      });
      const startedAll = (labels: string[]) => waitFor(`${labels.join(', ')} started`, () => labels.every((l) => started.includes(l)));
      /** Ends the job `label`, then waits for the jobs `next` to start. */
      const finish = async (label: string, ...next: string[]) => {
        await waitFor(`${label} running`, () => ends.has(label));
        ends.get(label)!();
        await startedAll(next);
      };
      return { queue, run, started, startedAll, finish, mostCapped: () => mostCapped };
    };

    it('keeps a capped agent within its cap under contention, its next run starting as one ends, tenants in turn', async () => {
      const { queue, run, started, startedAll, finish, mostCapped } = await setUp(4, caps({ [CAPPED]: 1 }));
      for (const label of ['a1', 'a2', 'a3', 'a4']) await queue.enqueue(job('a', label));
      await queue.enqueue(job('b', 'b1'));
      run();
      await startedAll(['a1']);
      // Three slots free, none taken by the capped agent's waiting runs: they stay queued.
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 3, running: 1 });
      expect(await queue.depth('b')).toEqual({ tenant: 'b', queued: 1, running: 0 });
      expect(await queue.agentDepths()).toEqual([{ agent: CAPPED, running: 1, waiting: 4, max: 1 }]);
      await finish('a1', 'b1');
      await finish('b1', 'a2');
      await finish('a2', 'a3');
      await finish('a3', 'a4');
      // First in first out, b1 would wait for all of a's; with the tenants in turn it goes second.
      expect(started).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
      expect(mostCapped()).toBe(1);
      await finish('a4');
      await waitFor('both queues empty', async () => (await queue.depths(10)).length === 0);
      expect(await queue.agentDepths()).toEqual([{ agent: CAPPED, running: 0, waiting: 0, max: 1 }]);
    });

    it('reports no agent when none is capped', async () => {
      const { queue } = await setUp(1, caps({ [CAPPED]: 0 }));
      await queue.enqueue(job('a', 'a1'));
      expect(await queue.agentDepths()).toEqual([]);
    });

    it('never has more of a capped agent’s runs admitted than its cap, however many slots are free', async () => {
      const { queue, run, started, startedAll, finish, mostCapped } = await setUp(6, caps({ [CAPPED]: 2 }));
      const labels = ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'];
      for (const label of labels) await queue.enqueue(job(label[0]!, label));
      await queue.enqueue(job('a', 'free1', FREE));
      run();
      // The run of the other agent, queued last, is admitted: every capped run before it was looked at.
      await startedAll(['a1', 'b1', 'free1']);
      expect(started).toHaveLength(3);
      for (const label of ['a1', 'b1', 'a2', 'b2']) await finish(label, labels[labels.indexOf(label) + 2] ?? label);
      await finish('a3');
      await finish('b3');
      const capped = started.filter((l) => l !== 'free1');
      expect([capped.slice(0, 2).sort(), capped.slice(2)]).toEqual([['a1', 'b1'], ['a2', 'b2', 'a3', 'b3']]);
      expect(mostCapped()).toBe(2);
    });

    it('admits a tenant’s runs of other agents past its capped agent’s backlog (no head-of-line blocking)', async () => {
      const { queue, run, started, startedAll, finish } = await setUp(2, caps({ [CAPPED]: 1 }));
      for (const label of ['c1', 'c2', 'c3', 'c4']) await queue.enqueue(job('a', label));
      await queue.enqueue(job('a', 'f1', FREE));
      await queue.enqueue(job('a', 'f2', FREE));
      run();
      await startedAll(['c1', 'f1']);
      await finish('f1', 'f2');
      expect(started).toEqual(['c1', 'f1', 'f2']);
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 3, running: 2 });
      await finish('c1', 'c2');
    });

    it('takes a withdrawn queued run out of its agent’s wait: its place goes to the next one', async () => {
      const { queue, run, started, startedAll, finish } = await setUp(3, caps({ [CAPPED]: 1 }));
      const gone = job('a', 'a2');
      for (const j of [job('a', 'a1'), gone, job('b', 'b1'), job('b', 'f1', FREE)]) await queue.enqueue(j);
      run();
      // f1, queued last, is admitted: a2 and b1 wait for the capped agent, a slot left free.
      await startedAll(['a1', 'f1']);
      expect([...started].sort()).toEqual(['a1', 'f1']);
      expect((await queue.depth('a')).queued).toBe(1);
      await queue.withdraw({ tenant: 'a', id: gone.run_id });
      expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 0, running: 1 });
      expect(await queue.hasLiveJob({ id: gone.run_id })).toBe(false);
      await finish('a1', 'b1');
      await queue.enqueue(job('a', 'a3'));
      await finish('b1', 'a3');
      expect(started.slice(2)).toEqual(['b1', 'a3']);
    });

    it('hands the slot of a withdrawn run that was next for its agent to the one after it', async () => {
      // Tenant a runs one job at a time: a2, handed the capped agent's slot when b1 ends, waits for a's slot.
      const { queue, run, started, startedAll, finish } = await setUp(3, caps({ [CAPPED]: 1 }, { a: { maxRunning: 1 } }));
      const next = job('a', 'a2');
      await queue.enqueue(job('b', 'b1'));
      run();
      await startedAll(['b1']);
      await queue.enqueue(next);
      await queue.enqueue(job('a', 'f1', FREE));
      await startedAll(['f1']);
      await queue.enqueue(job('c', 'c1'));
      await finish('b1');
      // a2 holds the agent's slot and waits for a's; c1 waits for the agent's.
      await waitFor('b1 released', async () => (await queue.depth('b')).running === 0);
      expect(await queue.depth('c')).toEqual({ tenant: 'c', queued: 1, running: 0 });
      expect(await queue.agentDepths()).toEqual([{ agent: CAPPED, running: 0, waiting: 1, max: 1 }]);
      await queue.withdraw({ tenant: 'a', id: next.run_id });
      await startedAll(['c1']);
      await finish('f1');
      await finish('c1');
      expect(started).toEqual(['b1', 'f1', 'c1']);
      await waitFor('every queue empty', async () => (await queue.depths(10)).length === 0);
    });
  });
}
