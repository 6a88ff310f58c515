import type { Span } from './types.js';

/** Spans ordered by `start`, ties by span id: the order GET /api/traces answers. */
export function sortSpans(spans: Span[]): Span[] {
  return spans.sort((a, b) => (a.start === b.start ? a.span_id.localeCompare(b.span_id) : a.start < b.start ? -1 : 1));
}
