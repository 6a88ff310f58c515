/**
 * The JSON the README writes under an example (`# 200 {"run_id":"…","status":"queued"}`), read
 * as a pattern and matched against the answer the server gave.
 *
 * The README's JSON is JSON with one addition, `…`:
 * - in an object, `…` (anywhere between members, with or without commas) allows keys the
 *   example does not show; without it the answer has exactly the keys shown;
 * - in an array, `…` allows more elements: those before it match the first elements of the
 *   answer, those after it the last ones; without it the answer has exactly the elements shown;
 * - in a string, `…` stands for any text (`"…"` is any string), and a run of hex digits right
 *   before it (`0193…`) is a placeholder: the first answer that matches it binds it to the
 *   text it stood for, and every later occurrence (`0193….2`, or in a command) is that text.
 *
 * Values the server makes up are compared by shape, not by value: a string that is an ISO
 * timestamp matches any ISO timestamp, an event id (`1763719200000-0`) any event id. Every other
 * value is compared as written.
 */

/** What an example's JSON says: a pattern tree. */
export type Pattern =
  | { kind: 'object'; members: [string, Pattern][]; open: boolean }
  | { kind: 'array'; head: Pattern[]; tail: Pattern[]; open: boolean }
  | { kind: 'text'; text: string }
  | { kind: 'literal'; value: number | boolean | null };

/** Placeholders bound so far (`0193…` → the run id it stood for). */
export type Bindings = Map<string, string>;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;
const EVENT_ID = /^\d{13}-\d+$/;
/** A placeholder (hex digits, then `…`) or a bare `…`. */
const WILDCARD = /([0-9a-f]{2,}…)|…/g;

/**
 * The end (exclusive) of the JSON value that starts `text` at `start`: where its brackets
 * balance, strings skipped. undefined while they do not balance yet (it goes on on the next line).
 */
export function jsonEnd(text: string, start = 0): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** Parses the README's JSON (with `…`) into a {@link Pattern}; throws on anything else. */
export function parsePattern(source: string): Pattern {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at ${at} of ${source}`);
  };
  const skipSpace = () => {
    while (at < source.length && /\s/.test(source[at]!)) at += 1;
  };
  const peek = () => {
    skipSpace();
    return source[at];
  };
  const string = (): string => {
    const match = /^"(?:[^"\\]|\\.)*"/.exec(source.slice(at));
    if (!match) fail('a string');
    at += match![0].length;
    return JSON.parse(match![0]) as string;
  };
  const value = (): Pattern => {
    const c = peek();
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return { kind: 'text', text: string() };
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(source.slice(at));
    if (!literal) return fail('a value');
    at += literal![0].length;
    return { kind: 'literal', value: JSON.parse(literal![0]) as number | boolean | null };
  };
  const object = (): Pattern => {
    at += 1;
    const members: [string, Pattern][] = [];
    let open = false;
    for (;;) {
      const c = peek();
      if (c === '}') break;
      if (c === ',') at += 1;
      else if (c === '…') {
        open = true;
        at += 1;
      } else if (c === '"') {
        const key = string();
        if (peek() !== ':') fail('a colon');
        at += 1;
        members.push([key, value()]);
      } else fail('a member');
    }
    at += 1;
    return { kind: 'object', members, open };
  };
  const array = (): Pattern => {
    at += 1;
    const head: Pattern[] = [];
    const tail: Pattern[] = [];
    let open = false;
    for (;;) {
      const c = peek();
      if (c === ']') break;
      if (c === ',') at += 1;
      else if (c === '…') {
        if (open) fail('a second … in an array');
        open = true;
        at += 1;
      } else (open ? tail : head).push(value());
    }
    at += 1;
    return { kind: 'array', head, tail, open };
  };
  const pattern = value();
  if (peek() !== undefined) fail('the end');
  return pattern;
}

/**
 * Matches `text` (a string with `…` and placeholders) against `actual`; binds the placeholders
 * it meets first. Returns why it does not match, or undefined.
 */
export function matchText(text: string, actual: string, bindings: Bindings): string | undefined {
  if (!text.includes('…')) {
    if (TIMESTAMP.test(text)) return TIMESTAMP.test(actual) ? undefined : `${JSON.stringify(actual)} is not a timestamp`;
    if (EVENT_ID.test(text)) return EVENT_ID.test(actual) ? undefined : `${JSON.stringify(actual)} is not an event id`;
    return text === actual ? undefined : `${JSON.stringify(actual)} is not ${JSON.stringify(text)}`;
  }
  const fresh: string[] = [];
  let regex = '';
  let last = 0;
  for (const m of text.matchAll(WILDCARD)) {
    regex += escape(text.slice(last, m.index));
    const name = m[1];
    const bound = name === undefined ? undefined : bindings.get(name);
    if (name === undefined) regex += '[^]*?';
    else if (bound !== undefined) regex += escape(bound);
    else if (fresh.includes(name)) regex += `\\k<p${fresh.indexOf(name)}>`;
    else {
      regex += `(?<p${fresh.length}>[^]+?)`;
      fresh.push(name);
    }
    last = m.index + m[0].length;
  }
  const match = new RegExp(`^${regex}${escape(text.slice(last))}$`).exec(actual);
  if (!match) return `${JSON.stringify(actual)} does not match ${JSON.stringify(text)}`;
  fresh.forEach((name, i) => bindings.set(name, match.groups![`p${i}`]!));
  return undefined;
}

/** Replaces the bound placeholders of `text` (a command, a header) by their values, longest first. */
export function substitute(text: string, bindings: Bindings): string {
  const names = [...bindings.keys()].sort((a, b) => b.length - a.length);
  let out = text;
  for (const name of names) out = out.split(name).join(bindings.get(name)!);
  return out;
}

/**
 * Why `actual` does not match `pattern` (the path to the first difference and what differs),
 * or undefined when it matches. Placeholders met first are bound in `bindings`, only when the
 * whole answer matches.
 */
export function matchPattern(pattern: Pattern, actual: unknown, bindings: Bindings): string | undefined {
  const trial = new Map(bindings);
  const problem = matchAt(pattern, actual, trial, '$');
  if (problem === undefined) for (const [name, value] of trial) bindings.set(name, value);
  return problem;
}

function matchAt(pattern: Pattern, actual: unknown, bindings: Bindings, path: string): string | undefined {
  switch (pattern.kind) {
    case 'literal':
      return actual === pattern.value ? undefined : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(pattern.value)}`;
    case 'text': {
      if (typeof actual !== 'string') return `${path}: ${JSON.stringify(actual)} is not a string`;
      const problem = matchText(pattern.text, actual, bindings);
      return problem && `${path}: ${problem}`;
    }
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an object`;
      const record = actual as Record<string, unknown>;
      for (const [key, value] of pattern.members) {
        if (!(key in record)) return `${path}: no key ${key} in ${JSON.stringify(actual)}`;
        const problem = matchAt(value, record[key], bindings, `${path}.${key}`);
        if (problem) return problem;
      }
      const shown = new Set(pattern.members.map(([key]) => key));
      const extra = Object.keys(record).filter((key) => !shown.has(key));
      if (!pattern.open && extra.length > 0) return `${path}: keys ${extra.join(', ')} are not shown (add them, or …)`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an array`;
      const shown = pattern.head.length + pattern.tail.length;
      if (pattern.open ? actual.length < shown : actual.length !== shown) {
        return `${path}: ${actual.length} elements where the example shows ${shown}${pattern.open ? ' or more' : ''}`;
      }
      const pairs: [Pattern, unknown, number][] = [
        ...pattern.head.map((p, i): [Pattern, unknown, number] => [p, actual[i], i]),
        ...pattern.tail.map((p, i): [Pattern, unknown, number] => [p, actual[actual.length - pattern.tail.length + i], actual.length - pattern.tail.length + i]),
      ];
      for (const [p, value, i] of pairs) {
        const problem = matchAt(p, value, bindings, `${path}[${i}]`);
        if (problem) return problem;
      }
      return undefined;
    }
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
