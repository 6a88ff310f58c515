import { fork } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ReaderAnswer } from './type-schemas-reader.js';
import type { TypedGraphSchemas } from './type-schemas-extract.js';

export type { TypedGraphSchemas, TypedSchemas } from './type-schemas-extract.js';

/*
 * A graph's schemas from its TypeScript types (type-schemas-extract.ts), read in a child
 * process so that the seconds a TypeScript program takes to build (and its memory) never hold
 * the API's event loop; once per graph file and export for the life of the process, a failure
 * included (a type that took the reader to its bounds would take it there again, on every
 * request). The child is bounded in heap (`--max-old-space-size`), time and the size of what it
 * answers. No TypeScript installed, a failure or a bound reached: undefined, and the caller
 * describes the graph from what it holds at run time. A process, not a worker thread: from the
 * sources the reader is TypeScript itself, which tsx loads in a process but Node 20 does not let
 * it load in a worker.
 */

/** How long one reading may take before its process is stopped. */
export const TYPE_SCHEMAS_TIMEOUT_MS = 30_000;
/** The reader's V8 heap (`--max-old-space-size`, MiB): a reading of an ordinary graph takes about half of it. */
export const TYPE_SCHEMAS_MEMORY_MB = 512;
/** The largest answer a reader may give (its schemas as JSON, bytes). */
export const TYPE_SCHEMAS_MAX_BYTES = 1024 * 1024;
/**
 * The diagnostics channel (`node:diagnostics_channel`) each reading reports on: a
 * {@link TypeSchemasReport} as its process starts and one as it ends.
 */
export const TYPE_SCHEMAS_CHANNEL = 'agentplane:langgraph:type-schemas';

/** How a reading ended: schemas read, no TypeScript, an error, an answer past its size bound, stopped at its time bound, or its process died (its heap bound). */
export type TypeSchemasOutcome = 'read' | 'unavailable' | 'failed' | 'too_large' | 'timeout' | 'crashed';

/** What {@link TYPE_SCHEMAS_CHANNEL} carries. */
export interface TypeSchemasReport {
  phase: 'start' | 'end';
  file: string;
  exportName: string;
  /** At the end. */
  outcome?: TypeSchemasOutcome;
  /** At the end: why it failed, when it did. */
  reason?: string;
  /** At the end: the reader's peak resident memory (KiB), as it measured it when it answered, else as last seen (Linux) before it was stopped. */
  maxRssKiB?: number;
}

/** The bounds of one reading. */
export interface TypeSchemasLimits {
  /** @defaultValue {@link TYPE_SCHEMAS_TIMEOUT_MS} */
  timeoutMs?: number;
  /** @defaultValue {@link TYPE_SCHEMAS_MEMORY_MB} */
  memoryMb?: number;
  /** @defaultValue {@link TYPE_SCHEMAS_MAX_BYTES} */
  maxBytes?: number;
}

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const reports = channel(TYPE_SCHEMAS_CHANNEL);
const cache = new Map<string, Promise<TypedGraphSchemas | undefined>>();

/** The schemas of the graph exported as `exportName` from `file` (absolute); undefined when its types cannot be read (then and for the life of the process). */
export function typedSchemasOf(file: string, exportName: string, limits: TypeSchemasLimits = {}): Promise<TypedGraphSchemas | undefined> {
  const key = `${file}\0${exportName}`;
  let reading = cache.get(key);
  if (!reading) {
    reading = read(file, exportName, limits);
    cache.set(key, reading);
  }
  return reading;
}

function read(file: string, exportName: string, limits: TypeSchemasLimits): Promise<TypedGraphSchemas | undefined> {
  const { timeoutMs = TYPE_SCHEMAS_TIMEOUT_MS, memoryMb = TYPE_SCHEMAS_MEMORY_MB, maxBytes = TYPE_SCHEMAS_MAX_BYTES } = limits;
  return new Promise((resolve) => {
    const reader = fileURLToPath(new URL(`./type-schemas-reader.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url));
    const loader = FROM_SOURCE ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
    const execArgv = [...loader, `--max-old-space-size=${memoryMb}`];
    const child = fork(reader, [file, exportName, String(maxBytes)], { execArgv, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' });
    reports.publish({ phase: 'start', file, exportName } satisfies TypeSchemasReport);
    let settled = false;
    const done = (outcome: TypeSchemasOutcome, answer: Partial<ReaderAnswer> = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const maxRssKiB = answer.maxRssKiB ?? peakOf(child.pid);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      const report: TypeSchemasReport = { phase: 'end', file, exportName, outcome, ...(answer.error ? { reason: answer.error } : {}), ...(maxRssKiB ? { maxRssKiB } : {}) };
      reports.publish(report);
      resolve(answer.schemas);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    child.once('message', (answer: ReaderAnswer) => done(answer.schemas ? 'read' : answer.unavailable ? 'unavailable' : answer.tooLarge ? 'too_large' : 'failed', answer));
    child.once('error', (error) => done('crashed', { error: error.message }));
    child.once('exit', (code, signal) => done('crashed', { error: `the reader exited (${signal ?? code}) before it answered` }));
  });
}

/** A live process's peak resident memory (KiB) where Linux tells it, else undefined. */
function peakOf(pid: number | undefined): number | undefined {
  try {
    const peak = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return peak ? Number(peak[1]) : undefined;
  } catch {
    // gone already, or not Linux: not known
    return undefined;
  }
}
