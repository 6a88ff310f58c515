import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));

const HEADER =
  '# Benchmarks\n\nBenchmarks — every figure with the command that produced it and the machine; medians and ratios ' +
  'from one run; this machine is shared and noisy.\n';

/**
 * The markers around the part of a BENCHMARKS.md section that `npm run bench:<name>` writes
 * (or `writer`, when another command writes it).
 */
export function markers(name: string, writer = `npm run bench:${name}`): { begin: string; end: string } {
  return { begin: `<!-- bench:${name}:begin (written by ${writer}) -->`, end: `<!-- bench:${name}:end -->` };
}

/**
 * Writes `body` (which starts and ends with the markers of `name`) into the section `heading`
 * of BENCHMARKS.md, replacing only the generated part and keeping whatever else the section
 * holds (hand-written findings) and every other section. Missing file or section: created.
 */
export function writeGeneratedSection(heading: string, name: string, body: string, writer?: string): void {
  const { begin, end } = markers(name, writer);
  const text = existsSync(BENCHMARKS) ? readFileSync(BENCHMARKS, 'utf8') : HEADER;
  const headingLine = new RegExp(`^${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \\t]*$`, 'm');
  const start = text.search(headingLine);
  if (start < 0) {
    writeFileSync(BENCHMARKS, `${text.replace(/\n*$/, '\n')}\n${heading}\n\n${body}\n`);
    return;
  }
  // The section ends at the next heading of its level or above: a `###` subsection keeps to itself.
  const level = /^#+/.exec(heading)![0].length;
  const nextHeading = text.slice(start + heading.length).search(new RegExp(`^#{1,${level}} `, 'm'));
  const stop = nextHeading < 0 ? text.length : start + heading.length + nextHeading;
  const section = text.slice(start, stop);
  const from = section.indexOf(begin);
  const to = section.indexOf(end);
  const updated =
    from >= 0 && to > from
      ? section.slice(0, from) + body + section.slice(to + end.length)
      : `${heading}\n\n${body}\n\n${section.slice(heading.length).replace(/^[ \t]*\n+/, '')}`;
  writeFileSync(BENCHMARKS, text.slice(0, start) + updated + text.slice(stop));
}
