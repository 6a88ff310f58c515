import type { JsonObject } from '../domain/types.js';
import type { GraphCheckpointEntry } from '../ports/graph-storage.js';

/**
 * The last state answer (`GET /threads/{id}/state`) of recently read threads, each under the
 * identity of the stored checkpoint it was made from: its record and its pending writes, as
 * stored. A thread read again while nothing of it changed is answered without deserializing
 * the checkpoint and having LangGraph rebuild its channels and tasks; any write (a new
 * checkpoint, a pending write added or replaced) changes the identity, and the next read
 * rebuilds. Bounded: MAX_THREADS threads (least recently read go first), answers and
 * identities of at most MAX_TEXT characters each; kept as JSON text, handed out parsed anew.
 */
const MAX_THREADS = 512;
const MAX_TEXT = 32 * 1024;

export class ThreadStateCache {
  private readonly threads = new Map<string, { version: string; text: string }>();

  /** The answer kept for the thread at `version`, if any. */
  get(thread: string, version: string | undefined): JsonObject | undefined {
    const kept = version === undefined ? undefined : this.threads.get(thread);
    if (!kept || kept.version !== version) return undefined;
    // Most recently read last.
    this.threads.delete(thread);
    this.threads.set(thread, kept);
    return JSON.parse(kept.text) as JsonObject;
  }

  /** Keeps `state` as the thread's answer at `version` (too large, or no version: forgets the thread). */
  set(thread: string, version: string | undefined, state: JsonObject): void {
    this.threads.delete(thread);
    if (version === undefined) return;
    const text = JSON.stringify(state);
    if (text.length > MAX_TEXT) return;
    this.threads.set(thread, { version, text });
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value!);
  }
}

/** The identity of a stored checkpoint with its pending writes; undefined when too long to keep. */
export function versionOf(entry: GraphCheckpointEntry): string | undefined {
  const { record } = entry;
  const writes = entry.writes.map((w) => `${w.taskId}\t${w.idx}\t${w.channel}\t${w.taskPath}\t${w.value}`).sort();
  const version = [record.checkpointId, record.parentId ?? '', record.checkpoint, record.metadata, ...writes].join('\n');
  return version.length > MAX_TEXT ? undefined : version;
}
