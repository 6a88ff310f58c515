import { spawn } from 'node:child_process';
import { matchPattern, matchText, parsePattern, type Bindings } from './answer-pattern.js';

/** What a curl command of the README got: status, headers, and what it printed. */
export interface CurlAnswer {
  /** 0 when curl got no answer. */
  status: number;
  /** Lower-case header names, as curl's `%{header_json}` gives them. */
  headers: Record<string, string[]>;
  /** What the command wrote on stdout, the header block of `curl -i` left out. */
  body: string;
  /** True when the command was killed at its bound (`status` is then 0 and `headers` empty). */
  timedOut: boolean;
}

export interface RunCurlOptions {
  /** `B`, and what `localhost:8420` in a command stands for: the server under test. */
  baseUrl: string;
  /**
   * For an event stream that does not end by itself: called with the lines received so far;
   * once it returns true the command's output is closed, which ends curl at its next write.
   */
  enough?: (lines: string[]) => boolean;
  /** Bound of the whole command; past it the command is killed and the answer has `timedOut`. */
  timeoutMs: number;
}

/**
 * Runs one README command with bash as written, `localhost:8420` pointing at the server under
 * test and `$B` set to it. `curl` is wrapped to also report the status and the headers on
 * stderr (`--write-out`), so that a command needs neither `-i` nor `-w` for the test to check them.
 */
export function runCurl(command: string, options: RunCurlOptions): Promise<CurlAnswer> {
  const script = [
    `curl() { command curl --write-out '%{stderr}\\n@status %{http_code}\\n%{header_json}' "$@"; }`,
    command.replaceAll('http://localhost:8420', options.baseUrl).replaceAll('localhost:8420', options.baseUrl),
  ].join('\n');
  return new Promise((resolve, reject) => {
    // Its own process group, so that a command killed at the bound takes its curl with it.
    const child = spawn('bash', ['-c', script], { env: { ...process.env, B: options.baseUrl }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let closed = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, options.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (!closed && options.enough?.(stdout.split('\n').slice(0, -1))) {
        closed = true;
        child.stdout.destroy();
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', () => {
      clearTimeout(timer);
      const body = withoutHeaders(stdout);
      if (timedOut) return resolve({ status: 0, headers: {}, body, timedOut });
      const report = /\n@status (\d{3})\n(\{[^]*\})\s*$/.exec(stderr);
      if (!report) return reject(new Error(`curl reported no status: ${stderr}`));
      resolve({ status: Number(report[1]), headers: JSON.parse(report[2]!) as Record<string, string[]>, body, timedOut });
    });
  });
}

/** The output of `curl -i` without its header blocks (one per response: a 100 Continue, then the answer). */
function withoutHeaders(output: string): string {
  let body = output;
  while (/^HTTP\/[\d.]+ \d{3}/.test(body)) {
    const end = body.search(/\r?\n\r?\n/);
    body = end < 0 ? '' : body.slice(end).replace(/^\r?\n\r?\n/, '');
  }
  return body;
}

/**
 * Whether the lines of an event stream match the README's: the same lines in the same order
 * (blank ones aside), `…` where any number are left out; a `data:` line's JSON matches as an
 * answer does, an `id:` is any event id. Lines after the last one shown do not matter.
 * Returns undefined when they match, else the first line shown that the stream does not have.
 */
export function eventsMismatch(expected: readonly string[], actual: readonly string[]): string | undefined {
  const want = expected.filter((line) => line !== '');
  const got = actual.map((line) => line.replace(/\r$/, '')).filter((line) => line !== '');
  let furthest = 0;
  const at = (w: number, g: number): boolean => {
    furthest = Math.max(furthest, w);
    if (w === want.length) return true;
    if (want[w] === '…') {
      for (let k = g; k <= got.length; k += 1) if (at(w + 1, k)) return true;
      return false;
    }
    return g < got.length && lineMatches(want[w]!, got[g]!) && at(w + 1, g + 1);
  };
  return at(0, 0) ? undefined : (want.slice(furthest).find((line) => line !== '…') ?? want[furthest]);
}

function lineMatches(want: string, got: string): boolean {
  const field = /^(data|id): (.*)$/.exec(want);
  if (!field) return want === got;
  if (!got.startsWith(`${field[1]}: `)) return false;
  const value = got.slice(field[1]!.length + 2);
  const scratch: Bindings = new Map();
  if (field[1] === 'id') return matchText(field[2]!, value, scratch) === undefined;
  const pattern = parsePattern(field[2]!); // a README line that is not JSON with … throws: the example is wrong
  let data: unknown;
  try {
    data = JSON.parse(value);
  } catch {
    return false;
  }
  return matchPattern(pattern, data, scratch) === undefined;
}
