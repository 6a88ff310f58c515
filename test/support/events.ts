import type { RunEvent } from '../../src/domain/types.js';

/**
 * An event in the short form run tests compare sequences in: `type`, then `node` and
 * `status` when present, joined by `:` (`node_end:crawl:ok`, `interrupted:review`, `completed`).
 */
export function brief(event: RunEvent): string {
  return [event.type, event.node, event.status].filter(Boolean).join(':');
}
