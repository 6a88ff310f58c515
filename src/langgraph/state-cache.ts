/**
 * The last state answer (`GET /threads/{id}/state`) of recently read threads, as JSON text,
 * each under the version of the thread's stored checkpoints it was made at
 * ({@link GraphCheckpointStore.version}, read in the same step as the checkpoint). A thread read
 * again while its version stays is answered with the text kept: nothing deserialized, LangGraph
 * rebuilding no channels and tasks, nothing serialized again. Any write to the thread (a
 * checkpoint, a pending write, a delete) moves its version, and the next read rebuilds.
 * Bounded: MAX_THREADS threads (least recently read go first), answers of at most MAX_TEXT
 * characters each.
 */
const MAX_THREADS = 512;
const MAX_TEXT = 32 * 1024;

export class ThreadStateCache {
  private readonly threads = new Map<string, { version: string; text: string }>();

  /** The answer kept for the thread at `version`, if any. */
  get(thread: string, version: string): string | undefined {
    const kept = version === '' ? undefined : this.threads.get(thread);
    if (!kept || kept.version !== version) return undefined;
    // Most recently read last.
    this.threads.delete(thread);
    this.threads.set(thread, kept);
    return kept.text;
  }

  /** Keeps `text` as the thread's answer at `version` (too large, or no version: forgets the thread). */
  set(thread: string, version: string, text: string): void {
    this.threads.delete(thread);
    if (version === '' || text.length > MAX_TEXT) return;
    this.threads.set(thread, { version, text });
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value!);
  }
}
