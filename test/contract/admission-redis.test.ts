import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Job, Queue } from 'bullmq';
import { admissionKeys } from '../../src/adapters/redis/keys.js';
import { RunAdmission } from '../../src/adapters/redis/run-admission.js';
import { BullRunConsumer, BullRunQueue, RUNS_QUEUE } from '../../src/adapters/redis/run-queue.js';
import { DEFAULT_FAIR_SHARE } from '../../src/domain/fair-share.js';
import { loadScripts } from '../../src/adapters/redis/scripts.js';
import { runJobId } from '../../src/domain/run-jobs.js';
import type { RunJob } from '../../src/domain/types.js';
import { monitorRedis } from '../support/redis-monitor.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const redis = useRedis();

const job = (tenant: string): RunJob => ({ kind: 'start', tenant, run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' });
const POLICY = JSON.stringify({ d: [1, 0], t: {} });
/** The admission scripts' first arguments as a process that hands no job itself gives them (includes/admitRuns.lua). */
const unhanded = (keys: ReturnType<typeof admissionKeys>) => [keys.pending, POLICY, '', '', ''];
/** enqueueRun's arguments of a job (no cap on its tenant or its agent), from such a process. */
const enqueueArgs = (keys: ReturnType<typeof admissionKeys>, j: RunJob) => [...unhanded(keys), runJobId(j), JSON.stringify(j), 0, j.tenant, j.kind, j.agent_id, 0, 0];

/** What only the Redis adapter can meet: a process dying inside the admission, counts drifting. */
describe('RunQueue admission on Redis: crashes and drift', () => {
  const setUp = () => {
    const prefix = uniquePrefix('admission');
    const connection = () => redis.connect({ maxRetriesPerRequest: null });
    const queue = new BullRunQueue({ connection: connection(), prefix });
    const consumer = new BullRunConsumer({ connection: connection(), prefix, concurrency: 2, lockDurationMs: 30_000 });
    onTestFinished(async () => {
      await consumer.close(2_000);
      await queue.close();
    });
    return { prefix, queue, consumer, keys: admissionKeys(prefix), client: redis.connect() };
  };

  it('adds a start it admits to BullMQ in its own script, as BullMQ stores a job: one command to Redis', async () => {
    const { prefix, queue, consumer, keys, client } = setUp();
    const start = job('a');
    const id = runJobId(start);
    // A live worker's slots that take nothing yet: a start is admitted at once and waits in BullMQ.
    await loadScripts(client)('admitRuns', keys.keys, [...unhanded(keys), 'ghost 2', 60_000]);
    // The first start loads the script on the server (EVAL, or EVALSHA then EVAL): not counted.
    await queue.enqueue(job('b'));
    const monitor = await monitorRedis(redis.url);
    onTestFinished(() => monitor.disconnect());
    const sent: string[] = [];
    const markers = new Set<string>();
    // Commands sent to Redis (not those run inside a script) that name this test's keys.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua' || !args.slice(1).some((arg) => arg.includes(prefix))) return;
      if (String(args[0]).toLowerCase() === 'set') markers.add(String(args[1]));
      else sent.push(String(args[0]).toLowerCase());
    });
    await queue.enqueue(start);
    const marker = `${prefix}:marker`;
    await client.set(marker, '1');
    await waitFor('the marker seen', () => markers.has(marker));
    expect(sent).toEqual(['evalsha']);
    // What BullMQ's own add stores: its name, data and options, waiting for a worker, marked handed.
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(() => bull.close());
    const added = await Job.fromId(bull, id);
    expect({ name: added?.name, data: added?.data, opts: added?.opts }).toEqual({
      name: 'start',
      data: start,
      opts: { attempts: 10, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 }, jobId: id },
    });
    expect(await bull.getJobState(id)).toBe('waiting');
    expect(await client.sismember(keys.handed, id)).toBe(1);
    const seen: string[] = [];
    consumer.start(async (j) => void seen.push(j.run_id));
    await waitFor('the start delivered', () => seen.includes(start.run_id));
    await waitFor('its slot given back', async () => (await queue.depth('a')).running === 0);
  });

  it('at light load, admits a start in 18 commands and gives its slot back in 5 (no clock, no policy or job decoded)', async () => {
    const { prefix, queue, keys, client } = setUp();
    const start = job('a');
    const id = runJobId(start);
    await loadScripts(client)('admitRuns', keys.keys, [...unhanded(keys), 'ghost 2', 60_000]);
    await queue.enqueue(job('b'));
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(() => bull.close());
    const admission = new RunAdmission(client, prefix, bull, { attempts: 1, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 10 }, removeOnFail: { count: 10 } }, DEFAULT_FAIR_SHARE);
    await admission.release('start.none', { tenant: 'b', agent_id: 'echo' });
    const monitor = await monitorRedis(redis.url);
    onTestFinished(() => monitor.disconnect());
    // Each script this test sends (its keys name the prefix), with the commands it ran: a script's
    // commands follow it in MONITOR's order, nothing else runs between them. Other commands that
    // name the prefix (BullMQ's queue may write its metadata whenever its connection is ready)
    // are not scripts of the run path.
    const scripts: { name: string; inner: string[] }[] = [];
    let current: string[] | undefined;
    const markers = new Set<string>();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return void current?.push(String(args[0]).toUpperCase());
      current = undefined;
      if (!args.slice(1).some((arg) => arg.includes(prefix))) return;
      const name = String(args[0]).toLowerCase();
      if (name === 'set') return void markers.add(String(args[1]));
      if (name === 'evalsha' || name === 'eval') scripts.push({ name, inner: (current = []) });
    });
    await queue.enqueue(start);
    await admission.release(id, start);
    const marker = `${prefix}:marker`;
    await client.set(marker, '1');
    await waitFor('the marker seen', () => markers.has(marker));
    expect(scripts.map((s) => s.name)).toEqual(['evalsha', 'evalsha']);
    const [enqueued, released] = scripts.map((s) => s.inner);
    // The admission's own: clock, the job not there yet (waiting, admitted), nothing waiting or
    // delayed (one look), live slots, those taken, the job admitted and counted; then BullMQ's
    // add (9) and the hand mark.
    expect(enqueued!.slice(0, 8)).toEqual(['TIME', 'HEXISTS', 'HEXISTS', 'EXISTS', 'ZRANGEBYSCORE', 'HLEN', 'HSET', 'HINCRBY']);
    expect(enqueued!.at(-1)).toBe('SADD');
    expect(enqueued).toHaveLength(18);
    // The slot back, the count gone at 0, the mark gone, and nothing waiting or delayed.
    expect(released).toEqual(['HDEL', 'HINCRBY', 'HDEL', 'SREM', 'EXISTS']);
    expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 0, running: 0 });
    expect(await client.hexists(keys.keys[5]!, id)).toBe(0);
    expect(await client.sismember(keys.handed, id)).toBe(0);
  });

  it('adds a job admitted by a process that died before handing it to BullMQ (the reconcile pass)', async () => {
    const { queue, consumer, keys, client } = setUp();
    const lost = job('a');
    const script = loadScripts(client);
    // A live worker's slot, then the admission as a dying API replica runs it: admitted, never added.
    await script('admitRuns', keys.keys, [...unhanded(keys), 'ghost 1', 60_000]);
    const [queued, , ...admitted] = await script<[number, number, ...string[]]>('enqueueRun', keys.keys, enqueueArgs(keys, lost));
    expect([queued, admitted.length]).toEqual([1, 1]);
    expect(await queue.hasLiveJob({ id: lost.run_id })).toBe(true);
    const seen: string[] = [];
    consumer.start(async (j) => void seen.push(j.run_id));
    await waitFor('the lost job delivered', () => seen.includes(lost.run_id), 20_000);
    await waitFor('its slot given back', async () => (await queue.depth('a')).running === 0);
    expect(seen).toEqual([lost.run_id]);
  });

  it('gives back the slot of a job handed to BullMQ then deleted there by hand, and never adds it again', async () => {
    const { prefix, queue, keys, client } = setUp();
    const deleted = job('a');
    const id = runJobId(deleted);
    const script = loadScripts(client);
    // A live worker's slot that takes nothing: the job waits in BullMQ, where an operator removes it.
    await script('admitRuns', keys.keys, [...unhanded(keys), 'ghost 1', 60_000]);
    await queue.enqueue(deleted);
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(() => bull.close());
    expect(await bull.getJobState(id)).toBe('waiting');
    expect(await bull.remove(id)).toBe(1);
    // Its run has no live job (the reaper's to end), before the reconcile pass and after it.
    expect(await queue.hasLiveJob({ id: deleted.run_id })).toBe(false);
    const admission = new RunAdmission(client, prefix, bull, { attempts: 1, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 10 }, removeOnFail: { count: 10 } }, DEFAULT_FAIR_SHARE);
    expect(await admission.reconcile(1_000)).toEqual({ added: 0, released: 1 });
    expect(await bull.getJobState(id)).toBe('unknown');
    expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 0, running: 0 });
    expect(await queue.hasLiveJob({ id: deleted.run_id })).toBe(false);
  });

  it('marks a job handed only when BullMQ has it (the mark rides in one pipeline behind the add, which may fail)', async () => {
    const { prefix, keys, client } = setUp();
    const admitted = job('a');
    const id = runJobId(admitted);
    const script = loadScripts(client);
    await script('admitRuns', keys.keys, [...unhanded(keys), 'ghost 1', 60_000]);
    await script('enqueueRun', keys.keys, enqueueArgs(keys, admitted));
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(() => bull.close());
    // Admitted, not in BullMQ (its add failed): not marked, so the reconcile pass adds it.
    expect(await script('handRuns', [keys.keys[5]!, keys.handed], [bull.toKey(''), id])).toBe(0);
    expect(await client.sismember(keys.handed, id)).toBe(0);
    await bull.add(admitted.kind, admitted, { jobId: id });
    expect(await script('handRuns', [keys.keys[5]!, keys.handed], [bull.toKey(''), id])).toBe(1);
    // Released (its run ended): its mark goes with its slot.
    await script('releaseRun', [...keys.keys, keys.handed], [...unhanded(keys), id]);
    expect(await client.sismember(keys.handed, id)).toBe(0);
  });

  it('recomputes counts and the ring that drifted (a failover lost writes) from the jobs themselves', async () => {
    const { prefix, queue, consumer, keys, client } = setUp();
    const jobs = [job('a'), job('a')];
    for (const j of jobs) await queue.enqueue(j);
    await client.hset(keys.keys[3]!, 'a', 40, 'ghost', 7);
    await client.hset(keys.keys[4]!, 'a', 9);
    await client.del(keys.keys[1]!, keys.keys[2]!);
    expect(await queue.depth('a')).toEqual({ tenant: 'a', queued: 40, running: 9 });
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(() => bull.close());
    const admission = new RunAdmission(client, prefix, bull, { attempts: 1, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 10 }, removeOnFail: { count: 10 } }, DEFAULT_FAIR_SHARE);
    await admission.reconcile(1_000);
    expect(await queue.depths(10)).toEqual([{ tenant: 'a', queued: 2, running: 0 }]);
    // The ring holds the tenant again: its jobs get their turn.
    const seen: string[] = [];
    consumer.start(async (j) => void seen.push(j.run_id));
    await waitFor('both jobs delivered', () => seen.length === 2);
    expect(seen.sort()).toEqual(jobs.map((j) => j.run_id).sort());
  });

  it('recomputes a capped agent’s slots that drifted, and its next waiting run then starts when one ends', async () => {
    const prefix = uniquePrefix('admission');
    const fairShare = { ...DEFAULT_FAIR_SHARE, agents: { capped: 1 } };
    const connection = () => redis.connect({ maxRetriesPerRequest: null });
    const queue = new BullRunQueue({ connection: connection(), prefix, fairShare });
    const consumer = new BullRunConsumer({ connection: connection(), prefix, concurrency: 2, lockDurationMs: 30_000, fairShare });
    const client = redis.connect();
    const bull = new Queue(RUNS_QUEUE, { connection: client, prefix });
    onTestFinished(async () => {
      await consumer.close(2_000);
      await queue.close();
      await bull.close();
    });
    const keys = admissionKeys(prefix);
    const [first, second] = [job('a'), job('b')].map((j) => ({ ...j, agent_id: 'capped' }));
    const ends = new Map<string, () => void>();
    consumer.start(async (j) => new Promise<void>((resolve) => ends.set(j.run_id, resolve)));
    await queue.enqueue(first!);
    await queue.enqueue(second!);
    await waitFor('the first run started', () => ends.has(first!.run_id));
    expect(await queue.depth('b')).toEqual({ tenant: 'b', queued: 1, running: 0 });
    // A failover lost writes: the agent's count says 5 of its 1 slot are held, and another run holds one.
    await client.hset(keys.keys[8]!, 'capped', 5);
    await client.sadd(keys.keys[9]!, 'start.gone');
    const admission = new RunAdmission(client, prefix, bull, { attempts: 1, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 10 }, removeOnFail: { count: 10 } }, fairShare);
    await admission.reconcile(1_000);
    expect(await client.hgetall(keys.keys[8]!)).toEqual({ capped: '1' });
    expect(await client.smembers(keys.keys[9]!)).toEqual([]);
    ends.get(first!.run_id)!();
    await waitFor('the second run started', () => ends.has(second!.run_id));
    ends.get(second!.run_id)!();
    await waitFor('the agent’s slots all given back', async () => (await client.hlen(keys.keys[8]!)) === 0 && (await queue.depths(10)).length === 0);
  });
});
