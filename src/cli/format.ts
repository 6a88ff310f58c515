import type { StreamedEvent, WaitedRun } from '../client/index.js';

/** Rows as aligned columns under a header; `(none)` for no rows. Objects print as JSON. */
export function table(rows: readonly object[], columns: readonly string[]): string[] {
  if (rows.length === 0) return ['(none)'];
  const cells = rows.map((row) => columns.map((column) => cell((row as Record<string, unknown>)[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)];
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '-';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** `key  value` lines of an object's fields, nested values as JSON. */
export function fields(value: object): string[] {
  const entries = Object.entries(value);
  const width = Math.max(...entries.map(([key]) => key.length));
  return entries.map(([key, v]) => `${key.padEnd(width)}  ${cell(v)}`);
}

/** A run as a waiting command reports it: the run, then what it stopped with. */
export function describeRun(run: WaitedRun): string[] {
  const lines = [`run ${run.id}  ${run.status}  agent ${run.agent_id}  session ${run.session_id}`];
  if (run.error) lines.push(`error: ${run.error}`);
  if (run.approval) {
    lines.push(`waiting for approval ${run.approval.id}: ${run.approval.prompt}`);
    if (run.approval.payload !== undefined) lines.push(`  payload: ${JSON.stringify(run.approval.payload)}`);
    lines.push(`  agentplane approvals approve ${run.approval.id}   (or reject)`);
  }
  if (run.state) lines.push(`state: ${JSON.stringify(run.state)}`);
  if (run.status === 'queued' || run.status === 'running') lines.push('still going when the wait ended (--wait-ms)');
  return lines;
}

/** One event of a tail: id, time, type, then the fields it carries. */
export function eventLine({ id, event }: StreamedEvent): string {
  const { type, ts, session, run_id, agent_id, ...rest } = event;
  const extra = Object.entries(rest).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return [id, ts, type.padEnd(16), `session=${session}`, `run=${run_id}`, `agent=${agent_id}`, ...extra].join(' ');
}
