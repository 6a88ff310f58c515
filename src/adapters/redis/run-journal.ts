import { newId, nowIso } from '../../domain/time.js';
import { rootSpan, runEvent } from '../../domain/run-events.js';
import { activeExportedIds } from '../../observability/tracer.js';
import { DEFAULT_EVENT_RETENTION, END_NODE, type Checkpoint, type JsonObject, type Run, type RunEvent } from '../../domain/types.js';
import type { NodeStep, RunJournal, StepResult } from '../../ports/run-journal.js';
import type { StorageLimits } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import { flatToObject, statePairs } from './hash.js';
import { toRun } from './run-store.js';
import { SCRIPT_ARGS } from './script-args.js';
import { metaOfEntry } from './session-store.js';
import { timerMember } from './timer-store.js';

export interface RedisRunJournalOptions {
  limits: StorageLimits;
  /** Events retained per tenant (as the event bus). */
  eventsRetain: number;
  /** Bytes of event JSON retained per tenant (as the event bus). @defaultValue DEFAULT_EVENT_RETENTION.bytes */
  eventsMaxBytes?: number;
  /** Bytes of event JSON retained per run (as the event bus). @defaultValue DEFAULT_EVENT_RETENTION.runBytes */
  eventsRunMaxBytes?: number;
}

/** The worker's run path on Redis: one script to take a run, one per node (the last completes it). */
export class RedisRunJournal implements RunJournal {
  constructor(
    private readonly c: RedisContext,
    private readonly options: RedisRunJournalOptions,
  ) {}

  private eventBytes(): { eventsMaxBytes: number; eventsRunMaxBytes: number } {
    return {
      eventsMaxBytes: this.options.eventsMaxBytes ?? DEFAULT_EVENT_RETENTION.bytes,
      eventsRunMaxBytes: this.options.eventsRunMaxBytes ?? DEFAULT_EVENT_RETENTION.runBytes,
    };
  }

  async begin(tenant: string, ref: Pick<Run, 'id' | 'session_id' | 'agent_id'>, options: { announce?: boolean } = {}): Promise<{ run: Run; published?: RunEvent; checkpoint?: Checkpoint }> {
    const { keys } = this.c;
    const now = Date.now();
    const ts = nowIso(() => now);
    // The event is built here but for its node, which the script reads: `{"type":"node_start","node":…` + tail ('' announces nothing).
    const tail = JSON.stringify({ session: ref.session_id, run_id: ref.id, agent_id: ref.agent_id, ts }).slice(1);
    const reply = await this.c.script<unknown[]>(
      'beginRun',
      [
        keys.run(tenant, ref.id),
        keys.session(tenant, ref.session_id),
        keys.activeRuns(tenant),
        keys.events(tenant),
        keys.state(tenant, ref.session_id),
        keys.checkpoints(tenant, ref.session_id),
        keys.eventBytes(tenant),
        keys.eventsByRun(tenant),
      ],
      SCRIPT_ARGS.beginRun.encode({
        runId: ref.id,
        now: ts,
        nowMs: now,
        eventsRetain: this.options.eventsRetain,
        channel: this.c.announceChannel(tenant),
        tenantJson: JSON.stringify(tenant),
        eventTail: options.announce === false ? '' : `,${tail}`,
        runIndexPrefix: keys.runIndexPrefix(tenant),
        ...this.eventBytes(),
      }),
    );
    const run = toRun(flatToObject(reply[0] as unknown[]))!;
    const node = String(reply[1]);
    const checkpoint: Checkpoint | undefined =
      reply[2] === undefined ? undefined : { ...metaOfEntry(String(reply[2]), ref.session_id), state: JSON.parse(String(reply[3])) as JsonObject };
    return {
      run,
      ...(node === '' ? {} : { published: runEvent(ref, { type: 'node_start', node }, ts) }),
      ...(checkpoint ? { checkpoint } : {}),
    };
  }

  async step(tenant: string, run: Run, step: NodeStep): Promise<StepResult> {
    const { keys } = this.c;
    const { limits } = this.options;
    const now = Date.now();
    const ts = nowIso(() => now);
    const completes = step.next === END_NODE;
    const ends = step.ended.map(({ node }) => runEvent(run, { type: 'node_end', node, status: 'ok' }, ts));
    const next = completes ? [runEvent(run, { type: 'completed' }, ts)] : (step.starts ?? [step.next]).map((node) => runEvent(run, { type: 'node_start', node }, ts));
    // Several documents in one argument, one per line (JSON text holds no raw newline).
    const lines = (docs: readonly unknown[]) => docs.map((doc) => JSON.stringify(doc)).join('\n');
    const reply = await this.c.script<unknown[]>(
      'stepRun',
      [
        keys.session(tenant, run.session_id),
        keys.state(tenant, run.session_id),
        keys.checkpoints(tenant, run.session_id),
        keys.spans(tenant, run.session_id),
        keys.run(tenant, run.id),
        keys.events(tenant),
        keys.sessionsByActivity(tenant),
        keys.activeRuns(tenant),
        keys.queuedBehind(tenant, run.session_id),
        keys.scheduleRuns(tenant),
        keys.eventBytes(tenant),
        keys.eventsByRun(tenant),
      ],
      SCRIPT_ARGS.stepRun.encode(
        {
          sessionId: run.session_id,
          runId: run.id,
          checkpointId: newId(),
          nextNode: step.next,
          now: ts,
          nowMs: now,
          maxStateBytes: limits.maxStateBytes,
          maxStateKeys: limits.maxStateKeys,
          checkpointsRetain: limits.checkpointsRetain,
          spansRetain: limits.spansRetain,
          eventsRetain: this.options.eventsRetain,
          channel: this.c.announceChannel(tenant),
          tenantJson: JSON.stringify(tenant),
          spans: lines(step.ended.map(({ span }) => span)),
          nodeEnds: lines(ends),
          nextEvents: lines(next),
          rootSpan: completes ? JSON.stringify(rootSpan(run, 'completed', undefined, ts, activeExportedIds())) : '',
          runIndexPrefix: keys.runIndexPrefix(tenant),
          ...this.eventBytes(),
        },
        statePairs(step.patch),
      ),
    );
    const checkpoint = metaOfEntry(String(reply[1]), run.session_id);
    if (!completes) return { checkpoint, published: [...ends, ...next] };
    const hash = flatToObject(reply[2] as unknown[]);
    // The run's hash came whole: its stored input with it (the webhook and temporary session read it at the end).
    const done = { ...toRun(hash)!, stored_input: hash.graph_input ?? null };
    // Its deadline goes now, not when it comes due (the global timers set: another slot on a
    // cluster, so not in the script). Should this fail, the sweep drops a timer whose run ended.
    if (done.deadline_at) await this.c.redis.zrem(keys.timers(), timerMember('run', tenant, run.id)).catch(() => 0);
    return {
      checkpoint,
      completed: Number(reply[3]) > 0 ? { ...done, queued_behind: true } : done,
      scheduled: String(reply[4]) !== '',
      published: [...ends, ...next],
    };
  }
}
