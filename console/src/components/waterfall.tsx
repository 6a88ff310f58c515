import { useState } from 'preact/hooks';
import type { Span } from '../types.js';
import { Notice } from './ui.js';

interface Row {
  span: Span;
  depth: number;
  startMs: number;
  durationMs: number;
}

/** Each run's root span followed by its node spans, by start; spans whose parent is absent last. */
export function waterfallRows(spans: Span[]): Row[] {
  const byStart = [...spans].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  const t0 = Math.min(...byStart.map((s) => Date.parse(s.start)));
  const row = (span: Span, depth: number): Row => ({
    span,
    depth,
    startMs: Date.parse(span.start) - t0,
    durationMs: Math.max(0, Date.parse(span.end) - Date.parse(span.start)),
  });
  const ids = new Set(spans.map((s) => s.span_id));
  const rows: Row[] = [];
  for (const root of byStart.filter((s) => s.parent_id === '')) {
    rows.push(row(root, 0));
    for (const child of byStart.filter((s) => s.parent_id === root.span_id)) rows.push(row(child, 1));
  }
  for (const orphan of byStart.filter((s) => s.parent_id !== '' && !ids.has(s.parent_id))) rows.push(row(orphan, 1));
  return rows;
}

const ms = (n: number): string => (n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`);

/**
 * The OpenTelemetry traces the rows were exported in (tracing on: a stored span carries its
 * `trace_id`), in row order, each with the names of the runs (root spans) in it: the id to look
 * up in Jaeger, Tempo, Honeycomb, Langfuse or LangSmith.
 */
export function exportedTraces(rows: Row[]): { id: string; runs: string[] }[] {
  const traces = new Map<string, string[]>();
  for (const { span, depth } of rows) {
    if (!span.trace_id) continue;
    const runs = traces.get(span.trace_id) ?? [];
    if (depth === 0) runs.push(span.name);
    traces.set(span.trace_id, runs);
  }
  return [...traces].map(([id, runs]) => ({ id, runs }));
}

/** Copies `text` to the clipboard, its name "<Copy|Copied|Not copied> <what>"; shown only where the browser allows it (a secure context). */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [outcome, setOutcome] = useState<'Copied' | 'Not copied' | undefined>();
  if (!globalThis.navigator?.clipboard) return null;
  const copy = () => navigator.clipboard.writeText(text).then(() => setOutcome('Copied'), () => setOutcome('Not copied'));
  const shown = outcome ?? 'Copy';
  return (
    <button type="button" class="copy" aria-label={`${shown} ${what}`} onClick={() => void copy()}>
      {shown}
    </button>
  );
}

/** The trace as a waterfall: one bar per span, placed by its start and sized by its duration. */
export function Waterfall({ spans, error }: { spans: Span[]; error: string | undefined }) {
  const rows = waterfallRows(spans);
  const total = Math.max(1, ...rows.map((r) => r.startMs + r.durationMs));
  const traces = exportedTraces(rows);
  return (
    <section aria-labelledby="trace-title" class="card">
      <h2 id="trace-title">Trace</h2>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {traces.length > 0 ? (
        <ul class="trace-ids" aria-label="OpenTelemetry trace ids">
          {traces.map(({ id, runs }) => (
            <li key={id} data-trace={id}>
              trace <code class="trace-id">{id}</code> <CopyButton text={id} what={`trace id ${id}`} />
              {runs.length > 0 ? <span class="muted"> {runs.join(', ')}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {rows.length === 0 ? (
        <p class="empty">No span yet: a span is written when its node ends.</p>
      ) : (
        <table class="waterfall" aria-label="Spans by start time">
          <thead>
            <tr>
              <th scope="col">Span</th>
              <th scope="col">Status</th>
              <th scope="col">Starts</th>
              <th scope="col">Duration</th>
              <th scope="col" class="bar-col">
                Timeline ({ms(total)})
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ span, depth, startMs, durationMs }) => (
              <tr key={span.span_id} class={depth === 0 ? 'root' : 'child'}>
                <th scope="row" class={`depth-${depth}`}>
                  {span.name}
                </th>
                <td>{String(span.attributes.status ?? '')}</td>
                <td>+{ms(startMs)}</td>
                <td>{ms(durationMs)}</td>
                <td class="bar-col">
                  <div class="track" aria-hidden="true">
                    <div
                      class={`bar bar-${String(span.attributes.status ?? 'ok')}`}
                      style={{ left: `${(startMs / total) * 100}%`, width: `${Math.max(0.5, (durationMs / total) * 100)}%` }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
