/**
 * `--name value` flags of a benchmark's command line: `value(name)` is the word after `--name`
 * (undefined without it), `number(name, fallback)` that word as a positive integer (else an
 * error naming the flag), `flag(name)` whether `--name` is there.
 */
export function flagsOf(argv: readonly string[]) {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const number = (name: string, fallback: number): number => {
    const raw = value(name);
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a positive integer, got "${raw}"`);
    return n;
  };
  const flag = (name: string): boolean => argv.includes(`--${name}`);
  return { value, number, flag };
}
