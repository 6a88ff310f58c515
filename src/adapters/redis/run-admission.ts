import { Job, type Queue } from 'bullmq';
import { Packr } from 'msgpackr';
import { agentCapOf, cappedAgents, queueFull, shareOf, type AgentQueueDepth, type FairShare, type TenantQueueDepth } from '../../domain/fair-share.js';
import { liveJobIds, runJobId } from '../../domain/run-jobs.js';
import type { RunJob } from '../../domain/types.js';
import type { RedisClient } from './connection.js';
import { admissionKeys } from './keys.js';
import { loadScripts, type ScriptCaller } from './scripts.js';

/** BullMQ options of every run job (retries of infrastructure failures, what is kept of finished ones). */
export interface RunJobOptions {
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: { count: number };
  removeOnFail: { count: number };
}

/**
 * The Redis side of the run queue's admission rule (lua/includes/admitRuns.lua): jobs wait in
 * per-tenant lists until a script admits them to a worker slot and, in the same script, adds
 * them to the BullMQ `runs` queue (BullMQ's own add, with the run's job id, so adding one twice
 * is harmless) where the workers take them: a start is one round trip to Redis. Producers and
 * workers both hold one.
 */
export class RunAdmission {
  private readonly script: ScriptCaller;
  private readonly keys;
  private readonly policy: string;
  /** How the scripts hand a job they admit to BullMQ (includes/admitRuns.lua `hand`): their ARGV[3..5]. */
  private readonly handing: [queue: string, options: Buffer, handed: string];

  /** The connection of the reads a request makes of the queue (see `reads` of the constructor). */
  private readonly reads: RedisClient;
  /** The scripts on {@link reads}. */
  private readonly readScript: ScriptCaller;

  /** Each tenant's queued count as this process last saw it (an enqueue's reply, a look), and when. */
  private readonly seen = new Map<string, { queued: number; at: number }>();

  /**
   * `reads`: the connection of a request's reads (its tenant's room, queue depths, live workers),
   * with a command timeout so a stalled Redis answers them in time; `redis` by default.
   */
  constructor(
    private readonly redis: RedisClient,
    queuePrefix: string,
    private readonly queue: Queue,
    private readonly jobOptions: RunJobOptions,
    private readonly fair: FairShare,
    reads?: RedisClient,
  ) {
    this.reads = reads ?? redis;
    this.script = loadScripts(redis);
    this.readScript = loadScripts(this.reads);
    this.keys = admissionKeys(queuePrefix);
    this.policy = policyJson(fair);
    this.handing = [queue.toKey(''), packedOptions(jobOptions), this.keys.handed];
  }

  /** Queues the job for its turn (after `delayMs`); the jobs then admitted are in BullMQ when it resolves. */
  async enqueue(job: RunJob, delayMs = 0): Promise<void> {
    const [, queued, ...admitted] = await this.script<[number, number, ...string[]]>('enqueueRun', this.keys.keys, [
      this.keys.pending,
      this.policy,
      ...this.handing,
      runJobId(job),
      JSON.stringify(job),
      Math.max(0, Math.round(delayMs)),
      job.tenant,
      job.kind,
      job.agent_id,
      shareOf(this.fair, job.tenant).maxRunning,
      agentCapOf(this.fair, job.agent_id),
    ]);
    this.saw(job.tenant, queued);
    await this.dispatch(admitted);
  }

  /** The admission step, with a worker's heartbeat (`slots` for `lastsMs`; 0 ms removes it). */
  async admit(worker?: { id: string; slots: number; lastsMs: number }): Promise<void> {
    const member = worker ? `${worker.id} ${worker.slots}` : '';
    const admitted = await this.script<string[]>('admitRuns', this.keys.keys, [this.keys.pending, this.policy, ...this.handing, member, worker?.lastsMs ?? 0]);
    await this.dispatch(admitted);
  }

  /**
   * Gives a job's slot back (it is done for good) and hands the jobs then admitted to BullMQ.
   * `job`: its tenant and agent as the worker that ran it has them, which spares the script
   * reading and decoding the job; without it the script reads them.
   */
  async release(jobId: string, job?: Pick<RunJob, 'tenant' | 'agent_id'>): Promise<void> {
    const admitted = await this.script<string[]>('releaseRun', [...this.keys.keys, this.keys.handed], [this.keys.pending, this.policy, ...this.handing, jobId, ...(job ? [job.tenant, job.agent_id] : [])]);
    await this.dispatch(admitted);
  }

  /** Takes the run's waiting jobs out; a slot of its agent one of them held goes to the agent's next parked job. */
  async withdraw(run: { id: string; approval_id?: string }): Promise<void> {
    const admitted = await this.script<string[]>('withdrawRun', this.keys.keys, [this.keys.pending, this.policy, ...this.handing, ...liveJobIds(run)]);
    await this.dispatch(admitted);
  }

  /**
   * Refuses a start past the tenant's queued cap. Below half the cap, the count this process saw
   * in the last {@link SEEN_FRESH_MS} (its own enqueue's reply) answers without a round trip: a
   * burst across replicas may pass the cap by what they queue in that time, never by more, and
   * from half the cap up every start reads the count itself.
   */
  async checkRoom(tenant: string): Promise<void> {
    const { maxQueued } = shareOf(this.fair, tenant);
    if (maxQueued <= 0) return;
    const seen = this.seen.get(tenant);
    if (seen && seen.queued * 2 < maxQueued && Date.now() - seen.at < SEEN_FRESH_MS) return;
    const queued = Number((await this.reads.hget(this.keys.keys[3]!, tenant)) ?? 0);
    this.saw(tenant, queued);
    if (queued >= maxQueued) throw queueFull(queued, maxQueued);
  }

  private saw(tenant: string, queued: number): void {
    // Bounded: a process that saw more tenants than that starts over (each then reads once).
    if (this.seen.size >= SEEN_TENANTS && !this.seen.has(tenant)) this.seen.clear();
    this.seen.set(tenant, { queued: Number(queued), at: Date.now() });
  }

  /**
   * Whether one of the ids is waiting, or admitted and not yet handed to BullMQ: once handed,
   * BullMQ alone says whether the job lives (an operator may have removed it there).
   */
  async holds(ids: readonly string[]): Promise<boolean> {
    const [jobs, , , , , admitted] = this.keys.keys;
    const found = await Promise.all(
      ids.map(async (id) => {
        const [waiting, held, handed] = await Promise.all([this.redis.hexists(jobs!, id), this.redis.hexists(admitted!, id), this.redis.sismember(this.keys.handed, id)]);
        return waiting === 1 || (held === 1 && handed === 0);
      }),
    );
    return found.some(Boolean);
  }

  async depth(tenant: string): Promise<TenantQueueDepth> {
    const [queued, running] = await Promise.all([this.reads.hget(this.keys.keys[3]!, tenant), this.reads.hget(this.keys.keys[4]!, tenant)]);
    return { tenant, queued: Number(queued ?? 0), running: Number(running ?? 0) };
  }

  /** The workers whose heartbeat has not lapsed by Redis's clock (the one the scripts read). */
  async liveWorkers(): Promise<number> {
    const [seconds, micros] = await this.reads.time();
    return this.reads.zcount(this.keys.keys[7]!, Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), '+inf');
  }

  /** Every tenant with jobs waiting or admitted (the hashes hold no others), most waiting first, at most `limit`. */
  async depths(limit: number): Promise<TenantQueueDepth[]> {
    const [queued, running] = await Promise.all([this.reads.hgetall(this.keys.keys[3]!), this.reads.hgetall(this.keys.keys[4]!)]);
    const tenants = new Set([...Object.keys(queued), ...Object.keys(running)]);
    return [...tenants]
      .map((tenant) => ({ tenant, queued: Number(queued[tenant] ?? 0), running: Number(running[tenant] ?? 0) }))
      .sort((a, b) => b.queued - a.queued || b.running - a.running || a.tenant.localeCompare(b.tenant))
      .slice(0, limit);
  }

  /** The capped agents' runs admitted and parked, from one script that writes nothing; no read without a capped agent. */
  async agentDepths(): Promise<AgentQueueDepth[]> {
    const caps = cappedAgents(this.fair);
    if (caps.length === 0) return [];
    const counts = await this.readScript<number[]>('readAgentSlots', this.keys.keys, caps.map(([agent]) => agent));
    return caps.map(([agent, max], i) => ({ agent, running: Number(counts[2 * i]), waiting: Number(counts[2 * i + 1]), max }));
  }

  /**
   * Repairs what a crash or a failover can leave behind, one process at a time (a lock that
   * lapses): a job admitted but absent from BullMQ is added when it was never handed to it (its
   * admitter died before adding it), and released when it was (removed there by hand: its run
   * is the reaper's); one BullMQ finished whose release was lost is released; the counts and
   * the ring are recomputed from the jobs themselves. Returns how many jobs it added and released.
   */
  async reconcile(lockMs: number): Promise<{ added: number; released: number }> {
    const taken = await this.redis.set(this.keys.reconcileLock, '1', 'PX', lockMs, 'NX');
    if (taken !== 'OK') return { added: 0, released: 0 };
    // Marks read first: a job marked then and missing from BullMQ now was removed from it.
    const handed = new Set(await this.redis.smembers(this.keys.handed));
    const admitted = await this.redis.hgetall(this.keys.keys[5]!);
    const lost: string[] = [];
    let released = 0;
    for (const [id, data] of Object.entries(admitted)) {
      const state = await this.queue.getJobState(id);
      if (state === 'unknown' && !handed.has(id)) lost.push(data);
      else if (state === 'unknown' || state === 'completed' || state === 'failed') {
        await this.release(id);
        released += 1;
      }
    }
    // Marks whose release lost its SREM (Redis down then).
    const stale = [...handed].filter((id) => !(id in admitted));
    if (stale.length > 0) await this.redis.srem(this.keys.handed, ...stale);
    await this.dispatch(lost);
    await this.script('reconcileRuns', this.keys.keys, [this.keys.pending, this.policy]);
    return { added: lost.length, released };
  }

  /**
   * Adds to BullMQ the jobs a script admitted and did not hand itself (a job the reconcile pass
   * found lost, or one admitted by a script given no handing) and marks them handed, sent back to back on the one
   * connection (one round trip, in this order): BullMQ's add of each (Job.addJob, which sends
   * its command before it yields), then the mark, which takes only the jobs BullMQ then has. A
   * job admitted and never added is the reconcile pass's. (Not an ioredis pipeline: building
   * one copies every script of the connection, BullMQ's and ours, which costs more than the
   * round trip it saves.)
   */
  private async dispatch(admitted: readonly string[]): Promise<void> {
    if (admitted.length === 0) return;
    const client = await this.queue.backend.client;
    const ids: string[] = [];
    const sent: Promise<unknown>[] = admitted.map((data) => {
      const job = JSON.parse(data) as RunJob;
      const id = runJobId(job);
      ids.push(id);
      return new Job(this.queue, job.kind, job, { ...this.jobOptions, jobId: id }, id).addJob(client);
    });
    sent.push(this.script('handRuns', [this.keys.keys[5]!, this.keys.handed], [this.queue.toKey(''), ...ids]));
    await Promise.all(sent);
  }
}

/** How long a tenant's queued count seen by this process stands in for a look (checkRoom), below half its cap. */
const SEEN_FRESH_MS = 1_000;
/** Tenants whose count one process remembers at most. */
const SEEN_TENANTS = 10_000;

/** BullMQ's packer (its options: a map is a map, undefined is nil). */
const packer = new Packr({ useRecords: false, encodeUndefinedAsNil: true });

/**
 * Every run job's BullMQ options packed as BullMQ packs a job's (msgpack), their last key
 * `jobId` and not its value: the scripts append each job's id packed (includes/admitRuns.lua
 * `hand`), which spares them packing the options.
 */
function packedOptions(jobOptions: RunJobOptions): Buffer {
  const packed = packer.pack({ ...jobOptions, jobId: '' });
  // The empty id packs as its one byte, last.
  if (packed.at(-1) !== EMPTY_STRING) throw new Error('The packed run job options do not end with an empty jobId.');
  return Buffer.from(packed.subarray(0, -1));
}

/** msgpack's empty string (fixstr of length 0). */
const EMPTY_STRING = 0xa0;

/**
 * The policy as the scripts read it: `{"d": [weight, max running], "t": {tenant: [weight, max
 * running]}, "a": {agent: max running}}`, `a` only when an agent has a cap (without it the
 * scripts read no job's agent).
 */
function policyJson(fair: FairShare): string {
  const pair = (tenant: string) => {
    const share = shareOf(fair, tenant);
    return [share.weight, share.maxRunning];
  };
  const caps = cappedAgents(fair);
  return JSON.stringify({
    d: [fair.defaults.weight, fair.defaults.maxRunning],
    t: Object.fromEntries(Object.keys(fair.tenants).map((tenant) => [tenant, pair(tenant)])),
    ...(caps.length > 0 ? { a: Object.fromEntries(caps) } : {}),
  });
}
