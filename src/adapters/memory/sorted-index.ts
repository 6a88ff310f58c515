/**
 * Ids ordered by (sort key, id), for the memory adapter's lists: a page is a slice from one
 * end (O(page)); an insert is a binary search and, for the usual newest-last insert, a push.
 * Sort keys are RFC 3339 timestamps, whose string order is their time order.
 */
export class SortedIndex {
  private readonly entries: [key: string, id: string][] = [];

  get size(): number {
    return this.entries.length;
  }

  add(key: string, id: string): void {
    this.entries.splice(this.position(key, id), 0, [key, id]);
  }

  delete(key: string, id: string): void {
    const at = this.position(key, id);
    const found = this.entries[at];
    if (found && found[0] === key && found[1] === id) this.entries.splice(at, 1);
  }

  /** Ids from the largest (key, id) down, skipping `offset`. */
  newestFirst(offset: number, limit: number): string[] {
    const end = this.entries.length - offset;
    const out: string[] = [];
    for (let i = end - 1; i >= 0 && i >= end - limit; i -= 1) out.push(this.entries[i]![1]);
    return out;
  }

  /** Ids from the smallest (key, id) up, skipping `offset`. */
  oldestFirst(offset: number, limit: number): string[] {
    return this.entries.slice(offset, offset + limit).map(([, id]) => id);
  }

  /** The first position whose entry is not below (key, id). */
  private position(key: string, id: string): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const [k, i] = this.entries[mid]!;
      if (k < key || (k === key && i < id)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
