import { describe, expect, it } from 'vitest';
import { benchCommand, choice, choices, count, counts, parseFlags, text, toggle } from '../../bench/harness/args.js';

/** The one command-line reader of every `npm run bench:*` script (bench/harness/args.ts). */
const SPEC = {
  runs: count(500),
  floorClients: count(5000, 0),
  lightClients: counts([1, 8]),
  mode: choice(['throughput', 'wait'] as const, 'throughput'),
  backends: choices(['embedded', 'redis'] as const, ['embedded', 'redis']),
  profile: text(),
  noWrite: toggle(),
};
const USAGE = 'npm run bench:x -- [--runs N]';

describe('bench flags', () => {
  it('answers the defaults, and nothing given, without arguments', () => {
    const { flags, given } = parseFlags([], SPEC, USAGE);
    expect(flags).toEqual({ runs: 500, floorClients: 5000, lightClients: [1, 8], mode: 'throughput', backends: ['embedded', 'redis'], profile: undefined, noWrite: false });
    expect(given.size).toBe(0);
  });

  it('reads each kind of flag by its kebab-case name', () => {
    const argv = ['--runs', '20', '--floor-clients', '0', '--light-clients', '1,2,4', '--mode', 'wait', '--backends', 'redis,redis', '--profile', '/tmp/p', '--no-write'];
    const { flags, given } = parseFlags(argv, SPEC, USAGE);
    expect(flags).toEqual({ runs: 20, floorClients: 0, lightClients: [1, 2, 4], mode: 'wait', backends: ['redis'], profile: '/tmp/p', noWrite: true });
    expect([...given].sort()).toEqual(['backends', 'floorClients', 'lightClients', 'mode', 'noWrite', 'profile', 'runs']);
  });

  it('refuses a value out of range, a value not offered and an unknown flag, each with the usage', () => {
    expect(() => parseFlags(['--runs', '0'], SPEC, USAGE)).toThrow(`--runs needs a positive integer, got "0".\n${USAGE}`);
    expect(() => parseFlags(['--floor-clients', '-1'], SPEC, USAGE)).toThrow('--floor-clients needs an integer of at least 0, got "-1"');
    expect(() => parseFlags(['--light-clients', '1,x'], SPEC, USAGE)).toThrow('--light-clients needs a positive integer, got "x"');
    expect(() => parseFlags(['--mode', 'review'], SPEC, USAGE)).toThrow('--mode needs one of throughput, wait, got "review"');
    expect(() => parseFlags(['--backends', 'redis,x'], SPEC, USAGE)).toThrow('--backends takes embedded, redis, got "redis,x"');
    expect(() => parseFlags(['--runs'], SPEC, USAGE)).toThrow('--runs needs a positive integer, got "undefined"');
    expect(() => parseFlags(['--repeats', '2'], SPEC, USAGE)).toThrow(`Unknown argument "--repeats".\n${USAGE}`);
  });

  it('quotes the command a section names', () => {
    expect(benchCommand('bench:runs', [])).toBe('npm run bench:runs');
    expect(benchCommand('bench:runs', ['--mode', 'wait'])).toBe('npm run bench:runs -- --mode wait');
  });
});
