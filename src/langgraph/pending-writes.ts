import type { GraphWrite } from '../ports/graph-storage.js';

/** One `putWrites` waiting to be stored, with its caller's promise. */
interface Waiting {
  checkpointId: string;
  /** Being serialized: a read or a put given after `add` waits for them. */
  writes: Promise<GraphWrite[]>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The writes waiting for one thread and namespace. */
interface Group {
  threadId: string;
  ns: string;
  waiting: Waiting[];
  timer: NodeJS.Immediate;
}

/** A group's key: its thread and namespace. */
const keyOf = (threadId: string, ns: string): string => `${threadId}\u0000${ns}`;

/** Writes taken to go with a put: `settle` with the put's outcome (no error: they are stored). */
export interface TakenWrites {
  /** The writes serialized (a set that failed to is refused to its caller and left out). */
  ready: () => Promise<{ checkpointId: string; writes: GraphWrite[] }[]>;
  settle: (error?: unknown) => void;
}

/**
 * A task's pending writes held until the next put of their thread and namespace, so both go in
 * one storage call: LangGraph sends the writes of a step's tasks as each ends and then, once the
 * step is done, its checkpoint (with `durability: "sync"` it waits for all of them before the
 * next step). Writes no put takes by the next turn of the event loop (a step whose other tasks
 * still run, an interrupt, a failure) are stored on their own then, as before; a read of the
 * thread, given after them, stores them first. The caller's promise settles once they are stored,
 * or refused.
 */
export class PendingWrites {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly send: (threadId: string, ns: string, checkpointId: string, writes: GraphWrite[]) => Promise<void>) {}

  add(threadId: string, ns: string, checkpointId: string, writes: Promise<GraphWrite[]>): Promise<void> {
    const key = keyOf(threadId, ns);
    let group = this.groups.get(key);
    if (!group) {
      group = { threadId, ns, waiting: [], timer: setImmediate(() => void this.flush(key)) };
      this.groups.set(key, group);
    }
    const waiting = group.waiting;
    // Refused writes (too large) reach their caller when they would have gone, not as an unhandled rejection now.
    writes.catch(() => undefined);
    return new Promise<void>((resolve, reject) => waiting.push({ checkpointId, writes, resolve, reject }));
  }

  /** The writes waiting for `threadId` and `ns`, taken out to go with a put of theirs. */
  take(threadId: string, ns: string): TakenWrites | undefined {
    const group = this.remove(keyOf(threadId, ns));
    if (!group) return undefined;
    let taken: Waiting[] = [];
    return {
      ready: async () => {
        const batches = await Promise.all(
          group.waiting.map(async (waiting) => {
            try {
              return { waiting, checkpointId: waiting.checkpointId, writes: await waiting.writes };
            } catch (error) {
              waiting.reject(error);
              return undefined;
            }
          }),
        );
        const ready = batches.filter((batch) => batch !== undefined);
        taken = ready.map((batch) => batch.waiting);
        return ready.map(({ checkpointId, writes }) => ({ checkpointId, writes }));
      },
      settle: (error) => {
        for (const waiting of taken) {
          if (error === undefined) waiting.resolve();
          else waiting.reject(error);
        }
      },
    };
  }

  /** Stores what waits for `threadId` (every namespace) now: a read of the thread sees it. */
  async flushThread(threadId: string): Promise<void> {
    if (this.groups.size === 0) return;
    const keys = [...this.groups].filter(([, group]) => group.threadId === threadId).map(([key]) => key);
    await Promise.all(keys.map((key) => this.flush(key)));
  }

  private remove(key: string): Group | undefined {
    const group = this.groups.get(key);
    if (!group) return undefined;
    this.groups.delete(key);
    clearImmediate(group.timer);
    return group;
  }

  /** Stores a group's writes on their own; each caller learns its own outcome. */
  private async flush(key: string): Promise<void> {
    const group = this.remove(key);
    if (!group) return;
    await Promise.all(
      group.waiting.map(async (waiting) => {
        try {
          await this.send(group.threadId, group.ns, waiting.checkpointId, await waiting.writes);
          waiting.resolve();
        } catch (error) {
          waiting.reject(error);
        }
      }),
    );
  }
}
