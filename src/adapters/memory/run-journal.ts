import { rootSpan, runEvent } from '../../domain/run-events.js';
import { activeExportedIds } from '../../observability/tracer.js';
import { nowIso } from '../../domain/time.js';
import { END_NODE, type Checkpoint, type Run, type RunEvent } from '../../domain/types.js';
import type { EventBus } from '../../ports/event-bus.js';
import type { NodeStep, RunJournal, StepResult } from '../../ports/run-journal.js';
import type { Store } from '../../ports/store.js';

/**
 * The run path in one process: the store and bus calls of each step in order. JavaScript runs
 * the synchronous parts without interleaving; the checkpoint's run condition keeps a cancelled
 * run from writing, as the Redis script does.
 */
export class MemoryRunJournal implements RunJournal {
  constructor(
    private readonly store: Pick<Store, 'sessions' | 'runs'>,
    private readonly events: EventBus,
  ) {}

  async begin(tenant: string, ref: Pick<Run, 'id' | 'session_id' | 'agent_id'>, options: { announce?: boolean } = {}): Promise<{ run: Run; published?: RunEvent; checkpoint?: Checkpoint }> {
    const run = await this.store.runs.updateRun(tenant, ref.id, { status: 'running', from: ['queued', 'running'] });
    const checkpoint = (await this.store.sessions.getCheckpoint(tenant, ref.session_id)) ?? undefined;
    if (!checkpoint || checkpoint.node_id === END_NODE || options.announce === false) return checkpoint ? { run, checkpoint } : { run };
    const published = runEvent(ref, { type: 'node_start', node: checkpoint.node_id });
    await this.events.publish(tenant, published);
    return { run, published, checkpoint };
  }

  async step(tenant: string, run: Run, step: NodeStep): Promise<StepResult> {
    const checkpoint = await this.store.sessions.appendCheckpoint(tenant, run.session_id, { patch: step.patch, node_id: step.next, runId: run.id });
    const published: RunEvent[] = [];
    const publish = async (event: RunEvent) => {
      await this.events.publish(tenant, event);
      published.push(event);
    };
    for (const ended of step.ended) {
      await this.store.sessions.addSpan(tenant, run.session_id, ended.span);
      await publish(runEvent(run, { type: 'node_end', node: ended.node, status: 'ok' }));
    }
    if (step.next !== END_NODE) {
      for (const node of step.starts ?? [step.next]) await publish(runEvent(run, { type: 'node_start', node }));
      return { checkpoint, published };
    }
    const completed = await this.store.runs.updateRun(tenant, run.id, { status: 'completed', from: ['running'] });
    const end = nowIso();
    await this.store.sessions.addSpan(tenant, run.session_id, rootSpan(completed, 'completed', undefined, end, activeExportedIds()));
    await publish(runEvent(run, { type: 'completed' }, end));
    return { checkpoint, completed, published };
  }
}
