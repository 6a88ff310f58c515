/**
 * `npx --no-install tsx bench/langgraph/profile-summary.ts FILE.cpuprofile [--top N]`: self time of a V8 CPU
 * profile (`node --cpu-prof`, `npm run bench:langgraph -- --profile DIR`) by package or source file and by
 * function, largest first, as a share of the busy samples (idle left out).
 */
import { count, parseFlags } from '../harness/args.js';
import { summarizeProfile } from '../harness/profile.js';

const USAGE = 'npx --no-install tsx bench/langgraph/profile-summary.ts FILE.cpuprofile [--top N]';
const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error(`usage: ${USAGE}`);
const { flags } = parseFlags(rest, { top: count(30) }, USAGE);
console.log(summarizeProfile(file, [[-Infinity, Infinity]], flags.top, 'the whole profile').join('\n'));
