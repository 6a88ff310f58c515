import type { Run, RunStatus } from '../../domain/types.js';
import { SortedIndex } from './sorted-index.js';

/** What a tenant-wide run list filters by. */
export interface RunFilter {
  status?: RunStatus;
  agent_id?: string;
}

/**
 * A tenant's runs by (created_at, id), as the Redis adapter's run indexes: all of them, per
 * agent, per status and per both, so a filtered page costs O(page). The store calls `add` for a
 * new run, `move` whenever a run's status changes and `remove` when a run is deleted.
 */
export class RunIndex {
  private readonly indexes = new Map<string, SortedIndex>();

  add(run: Run): void {
    for (const key of keysOf(run.status, run.agent_id)) this.index(key).add(run.created_at, run.id);
  }

  move(run: Run, from: RunStatus): void {
    if (from === run.status) return;
    for (const key of statusKeys(from, run.agent_id)) this.indexes.get(key)?.delete(run.created_at, run.id);
    for (const key of statusKeys(run.status, run.agent_id)) this.index(key).add(run.created_at, run.id);
  }

  remove(run: Run): void {
    for (const key of keysOf(run.status, run.agent_id)) this.indexes.get(key)?.delete(run.created_at, run.id);
  }

  /** Ids of one page, newest first. */
  page(filter: RunFilter, offset: number, limit: number): string[] {
    return this.indexes.get(keyOf(filter.status, filter.agent_id))?.newestFirst(offset, limit) ?? [];
  }

  private index(key: string): SortedIndex {
    let index = this.indexes.get(key);
    if (!index) this.indexes.set(key, (index = new SortedIndex()));
    return index;
  }
}

function keyOf(status: RunStatus | undefined, agent: string | undefined): string {
  return JSON.stringify([status ?? null, agent ?? null]);
}

function statusKeys(status: RunStatus, agent: string): string[] {
  return [keyOf(status, undefined), keyOf(status, agent)];
}

function keysOf(status: RunStatus, agent: string): string[] {
  return [keyOf(undefined, undefined), keyOf(undefined, agent), ...statusKeys(status, agent)];
}
