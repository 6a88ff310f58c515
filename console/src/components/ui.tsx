import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../errors.js';
import type { StreamStatus } from '../events.js';
import { pretty, type Change } from '../json.js';

/** A message for the user: errors are announced at once (role alert), notices politely. */
export function Notice({ kind, children }: { kind: 'error' | 'info' | 'success'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp shown in the browser's zone, with the RFC 3339 value as machine-readable datetime. */
export function Time({ iso }: { iso: string | undefined }) {
  if (!iso) return <span>—</span>;
  return <time dateTime={iso}>{DATE.format(new Date(iso))}</time>;
}

/** "3 min ago", "in 2 h": coarse and readable. */
export function relative(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(seconds);
  const [value, unit] =
    abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.round(abs / 60), 'min'] : abs < 86_400 ? [Math.round(abs / 3600), 'h'] : [Math.round(abs / 86_400), 'd'];
  return seconds <= 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

/** How often the relative times on screen ("12 s ago") are worked out again. */
export const TICK_MS = 5_000;
const ticking = new Set<() => void>();
let ticker: number | undefined;

/** The time now, renewed every {@link TICK_MS} while mounted: one timer serves every component. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const tick = () => setNow(Date.now());
    ticking.add(tick);
    ticker ??= window.setInterval(() => ticking.forEach((t) => t()), TICK_MS);
    return () => {
      ticking.delete(tick);
      if (ticking.size === 0) {
        window.clearInterval(ticker);
        ticker = undefined;
      }
    };
  }, []);
  return now;
}

/** {@link relative} that keeps itself current, the exact time in its tooltip. */
export function Relative({ iso }: { iso: string }) {
  const now = useNow();
  return <span title={iso}>{relative(iso, now)}</span>;
}

const STREAM_TEXT: Record<StreamStatus, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  stopped: 'Not live',
};

export function LiveBadge({ status }: { status: StreamStatus }) {
  return (
    <span class={`live live-${status}`} role="status" aria-label={`Event stream: ${STREAM_TEXT[status]}`}>
      {STREAM_TEXT[status]}
    </span>
  );
}

const show = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

/** Top-level changes of a state as a table: key, before, after. */
export function DiffView({ changes, caption }: { changes: Change[]; caption: string }) {
  if (changes.length === 0) return <p class="muted">{caption}: no change.</p>;
  return (
    <table class="diff">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Change</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.key} class={`diff-${c.kind}`} data-key={c.key}>
            <th scope="row">
              <code>{c.key}</code>
            </th>
            <td>{c.kind}</td>
            <td>
              <code class="before">{show(c.before)}</code>
            </td>
            <td>
              <code class="after">{show(c.after)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Read-only JSON. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {pretty(value)}
    </pre>
  );
}

/** Lines of pretty JSON above which {@link JsonDetails} starts collapsed. */
const OPEN_JSON_LINES = 12;

/** Read-only JSON under a summary that opens it; open from the start when it is short. */
export function JsonDetails({ value, label }: { value: unknown; label: string }) {
  const text = pretty(value);
  const lines = text.split('\n').length;
  return (
    <details class="json-details" open={lines <= OPEN_JSON_LINES}>
      <summary>
        {label} ({lines === 1 ? '1 line' : `${lines} lines`} of JSON)
      </summary>
      <pre class="json" aria-label={label} tabIndex={0}>
        {text}
      </pre>
    </details>
  );
}

export interface JsonEditorProps {
  id: string;
  label: string;
  value: string;
  error?: string | undefined;
  readOnly?: boolean;
  rows?: number;
  onInput(text: string): void;
}

/** A textarea for JSON with its label and its validation message tied to it. */
export function JsonEditor({ id, label, value, error, readOnly, rows = 12, onInput }: JsonEditorProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="json-editor"
        rows={rows}
        spellcheck={false}
        value={value}
        readOnly={readOnly}
        aria-invalid={error ? 'true' : 'false'}
        aria-describedby={`${id}-message`}
        onInput={(e) => onInput((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <p id={`${id}-message`} class={error ? 'field-error' : 'field-ok'} aria-live="polite">
        {error ?? (readOnly ? 'Read-only.' : 'Valid JSON object.')}
      </p>
    </div>
  );
}

/** Runs an async action, with its pending flag and its error for display. */
export function useAction(): {
  busy: boolean;
  error: string | undefined;
  setError(message: string | undefined): void;
  run<T>(action: () => Promise<T>): Promise<T | undefined>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (caught) {
      setError(messageOf(caught));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
