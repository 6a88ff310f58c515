import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { markers, writeGeneratedSection } from '../benchmarks-md.js';

/** The machine figures come from, as every section names it. */
export interface Machine {
  cores: number;
  memGiB: number;
  cpu: string;
  node: string;
  redis: string;
}

export function machine(redisVersion: string): Machine {
  return {
    cores: cpus().length,
    memGiB: Math.round(totalmem() / 2 ** 30),
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    node: process.version,
    redis: redisVersion,
  };
}

/** `2 cores (AMD EPYC), 24 GiB, Node v20.19.0`: how the sections and progress lines name the machine. */
export const describeMachine = (m: Machine): string => `${m.cores} cores (${m.cpu}), ${m.memGiB} GiB, Node ${m.node}`;

/** The commit measured, and how many files under src/ differed from it then. */
export function sourceRevision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8', cwd: fileURLToPath(new URL('../../', import.meta.url)) }).stdout.trim();
  const dirty = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
  return `commit ${git('rev-parse', '--short', 'HEAD') || 'unknown'}${dirty ? ` + ${dirty} uncommitted files in src/` : ''}`;
}

/** Now, UTC, to the minute: `2026-01-31 23:59`. */
export const stamp = (): string => new Date().toISOString().slice(0, 16).replace('T', ' ');

/** The first line of most sections: `` Command: `npm run …` (<stamp> UTC, <source>). `` */
export const commandLine = (command: string, source: string): string => `Command: \`${command}\` (${stamp()} UTC, ${source}).`;

/**
 * Where a benchmark's block goes in BENCHMARKS.md: the section `heading`, the block's marker
 * `name`, and the command that writes it (`npm run bench:<name>` unless another).
 */
export interface SectionPlace {
  heading: string;
  name: string;
  writer?: string;
}

/** The generated block of a section: its lines between the markers of `place`. */
export function generatedBlock(place: SectionPlace, lines: string[]): string {
  const { begin, end } = markers(place.name, place.writer);
  return [begin, ...lines, end].join('\n');
}

/** Writes `block` (from {@link generatedBlock}) into its section of BENCHMARKS.md and says so. */
export function writeBlock(place: SectionPlace, block: string): void {
  writeGeneratedSection(place.heading, place.name, block, place.writer);
  console.log(`BENCHMARKS.md: section "${place.heading}" (${place.name}) updated.`);
}
