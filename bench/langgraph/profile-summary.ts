/**
 * `npx --no-install tsx bench/langgraph/profile-summary.ts FILE.cpuprofile [--top N]`: self time of a V8 CPU
 * profile (`node --cpu-prof`, `npm run bench:langgraph -- --profile DIR`) by function and by
 * package or source file, largest first, as a share of the samples.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top N]');
const top = rest[0] === '--top' ? Number(rest[1]) : 30;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** A package (`@langchain/langgraph`), a source file of ours (`src/langgraph/run-engine.ts`), or `(program)`-like names. */
function where(url: string): string {
  if (!url) return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  const ours = /\/((?:src|bench|examples)\/.*)$/.exec(path);
  if (ours) return ours[1]!;
  return path.startsWith('node:') ? path : path.split('/').slice(-2).join('/');
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  add(byFunction, `${functionName || '(anonymous)'} ${where(url)}:${lineNumber + 1}`, us);
  add(byPlace, where(url), us);
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
};
show('Self time by package / file', byPlace);
show('Self time by function', byFunction);
