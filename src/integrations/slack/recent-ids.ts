/**
 * The last `capacity` ids seen, oldest forgotten first. Slack redelivers an event it thinks
 * was not acknowledged up to three times within minutes, so a bounded memory of recent ids is
 * enough to handle each event once without growing for ever.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError('RecentIds capacity must be a positive integer');
  }

  /** Records `id`; false when it was already recorded. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}
