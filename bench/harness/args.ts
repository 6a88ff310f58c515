/**
 * The command line of every benchmark: `--name value` flags declared once per benchmark as a
 * spec (`{ runs: count(5000), noWrite: toggle() }`: the key in camelCase, the flag in
 * kebab-case, `--no-write`), read by {@link parseFlags} into typed values. A flag not in the
 * spec, or a value its reader refuses, is an error that ends with the benchmark's usage.
 */

/** How one flag is read: its value when absent, and how the word after it is read (none: a switch, true when given). */
export interface Flag<T> {
  fallback: T;
  read?: (raw: string | undefined, flag: string) => T;
}

type Spec = Record<string, Flag<unknown>>;

/** The values of a spec's flags. */
export type Flags<S extends Spec> = { [K in keyof S]: S[K] extends Flag<infer T> ? T : never };

class FlagError extends Error {}

function integer(raw: string | undefined, flag: string, min: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new FlagError(`${flag} needs ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}, got "${raw}"`);
  }
  return value;
}

const parts = (raw: string | undefined) => (raw ?? '').split(',');

/** An integer of at least `min`. */
export const count = (fallback: number, min = 1): Flag<number> => ({ fallback, read: (raw, flag) => integer(raw, flag, min) });

/** A comma-separated list of positive integers (`1,8,32`). */
export const counts = (fallback: number[]): Flag<number[]> => ({ fallback, read: (raw, flag) => parts(raw).map((part) => integer(part, flag, 1)) });

/** One of `values`. */
export const choice = <T extends string>(values: readonly T[], fallback: T): Flag<T> => ({
  fallback,
  read: (raw, flag) => {
    if (values.includes(raw as T)) return raw as T;
    throw new FlagError(`${flag} needs one of ${values.join(', ')}, got "${raw}"`);
  },
});

/** A comma-separated list of `values`, each once, in the order given. */
export const choices = <T extends string>(values: readonly T[], fallback: readonly T[]): Flag<T[]> => ({
  fallback: [...fallback],
  read: (raw, flag) => {
    if (parts(raw).some((p) => !values.includes(p as T))) throw new FlagError(`${flag} takes ${values.join(', ')}, got "${raw}"`);
    return [...new Set(parts(raw) as T[])];
  },
});

/** Any word (a directory, …); undefined when absent or empty. */
export const text = (): Flag<string | undefined> => ({ fallback: undefined, read: (raw) => raw || undefined });

/** A switch: `--name` alone, true when given. */
export const toggle = (): Flag<boolean> => ({ fallback: false });

/** The flag of a spec key: `lightRuns` → `--light-runs`. */
export const flagName = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * Reads `argv` (the words after `npm run bench:<name> --`) by `spec`. Answers the values and
 * which flags were given (for defaults that depend on other flags); throws on anything else,
 * its message followed by `usage`.
 */
export function parseFlags<S extends Spec>(argv: readonly string[], spec: S, usage: string): { flags: Flags<S>; given: ReadonlySet<keyof S> } {
  const keys = new Map(Object.keys(spec).map((key) => [flagName(key), key as keyof S & string]));
  const flags = Object.fromEntries(Object.entries(spec).map(([key, flag]) => [key, flag.fallback])) as Flags<S>;
  const given = new Set<keyof S>();
  try {
    for (let i = 0; i < argv.length; i += 1) {
      const flag = argv[i]!;
      const key = keys.get(flag);
      if (key === undefined) throw new FlagError(`Unknown argument "${flag}"`);
      const { read } = spec[key]!;
      flags[key] = (read ? read(argv[++i], flag) : true) as Flags<S>[typeof key];
      given.add(key);
    }
  } catch (error) {
    throw error instanceof FlagError ? new Error(`${error.message}.\n${usage}`) : error;
  }
  return { flags, given };
}

/** What a run of a benchmark was called with, as its section quotes it: `npm run bench:<name> -- <argv>`. */
export function benchCommand(script: string, argv: readonly string[]): string {
  return [`npm run ${script}`, ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
}
