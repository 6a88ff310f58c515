import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { matchPattern, matchText, parsePattern, substitute, type Bindings } from './answer-pattern.js';
import { blocksOf, docPages, isCli, isShell, ROOT, runs, serverCommand, stepsOf } from './doc-pages.js';
import type { Expectation, Step } from './readme-steps.js';
import { eventsMismatch, runCurl, type CurlAnswer } from './run-curl.js';

/**
 * Every shell example of the documentation (README.md, CONTRIBUTING.md, docs/**), pasted in
 * order as a new user would, against a fresh `npm start` (embedded, nothing stored yet): each
 * curl answers the status, headers and JSON shape the comment under it shows (readme-steps.ts
 * says how a comment is read, answer-pattern.ts what `…` and placeholders mean); a curl without
 * such a comment must answer 2xx. `npm run -s agentplane -- …` commands run too, and print the
 * lines their comments show (`…` any text, `01…` a placeholder bound by the first line showing it).
 *
 * A page's server is the one its own start command describes (`AGENTS_MODULE=… npm start`), or
 * a plain `npm start`; pages that describe the same server share one, in reading order, so a
 * page must not reuse a session id another page of its server made. Placeholders hold within a
 * page. A read that follows a run started with 202 may see the run before its worker got to it,
 * as a person reading a moment later would not: it is read again until it matches, for a few
 * seconds. A block marked `no-run` is only counted; any other command of a runnable block is an
 * error here, so nothing is shown as runnable that is not run.
 */

const SETTLE_MS = 10_000;
const COMMAND_TIMEOUT_MS = 30_000;

interface PageSteps {
  file: string;
  steps: Step[];
}

interface Server {
  env: Record<string, string>;
  pages: PageSteps[];
}

const pages = docPages().filter((file) => existsSync(join(ROOT, file)));
const servers = new Map<string, Server>();
const notRunnable: string[] = [];
const counts = { curl: 0, cli: 0, servers: 0, shownOnly: 0 };
const bindingsOf = new Map<string, Bindings>();
for (const file of pages) {
  const shell = blocksOf(file).filter(isShell);
  counts.shownOnly += shell.filter((block) => !runs(block)).length;
  // A start command opens a segment that runs against the server it describes; before the first, a plain `npm start`.
  let segment: PageSteps = { file, steps: [] };
  const segments: [Record<string, string>, PageSteps][] = [[{}, segment]];
  for (const step of shell.filter(runs).flatMap(stepsOf)) {
    const start = serverCommand(step.command);
    if (start) {
      segment = { file, steps: [] };
      segments.push([start, segment]);
    } else if (/localhost:8420|\$B\b/.test(step.command) && step.runs) segment.steps.push(step);
    else if (isCli(step.command)) segment.steps.push(step);
    else notRunnable.push(`${file}:${step.line}: ${step.command.split('\n')[0]}`);
  }
  bindingsOf.set(file, new Map());
  for (const [env, steps] of segments) {
    if (steps.steps.length === 0) continue;
    counts.curl += steps.steps.filter((step) => step.runs).length;
    counts.cli += steps.steps.filter((step) => !step.runs).length;
    const key = JSON.stringify(Object.entries(env).sort());
    if (!servers.has(key)) servers.set(key, { env, pages: [] });
    servers.get(key)!.pages.push(steps);
  }
}
counts.servers = servers.size;

it('runs every command of the runnable shell blocks, and counts the others', () => {
  console.log(`documentation examples: ${counts.curl} curl and ${counts.cli} CLI commands run against ${counts.servers} servers; ${counts.shownOnly} shell blocks marked no-run`);
  expect(notRunnable, 'a command the test cannot run: mark its block `sh no-run`, or show it with curl or npm run -s agentplane').toEqual([]);
  expect(counts.curl).toBeGreaterThan(50);
});

/** Why `answer` is not what `expect` says (several lines), or undefined. Binds placeholders only when all matches. */
function difference(answer: CurlAnswer, expect: Expectation | undefined, bindings: Bindings): string | undefined {
  const tail = answer.body.length > 4000 ? `…${answer.body.slice(-4000)}` : answer.body;
  if (answer.timedOut) return `no end within ${COMMAND_TIMEOUT_MS} ms${expect?.events ? `; the stream has no line ${eventsMismatch(expect.events, answer.body.split('\n'))}` : ''}\n--- it printed:\n${tail}`;
  if (!expect) return answer.status >= 200 && answer.status < 300 ? undefined : `status ${answer.status}, not 2xx: ${tail}`;
  const trial: Bindings = new Map(bindings);
  const problems: string[] = [];
  if (answer.status !== expect.status) problems.push(`status ${answer.status}, not ${expect.status}`);
  for (const [name, value] of expect.headers) {
    const actual = answer.headers[name.toLowerCase()]?.[0];
    const problem = actual === undefined ? 'missing' : matchText(value, actual, trial);
    if (problem) problems.push(`header ${name}: ${problem}`);
  }
  for (const name of expect.present) if (!answer.headers[name.toLowerCase()]) problems.push(`header ${name} missing`);
  const type = answer.headers['content-type']?.[0] ?? '';
  if (expect.contentType && !(type === expect.contentType || (expect.events && type.startsWith(expect.contentType)))) {
    problems.push(`content type ${type}, not ${expect.contentType}`);
  }
  if (expect.json !== undefined) {
    const pattern = parsePattern(expect.json);
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      problems.push(`the answer is not JSON (${type})`);
    }
    if (body !== undefined && !type.startsWith('application/json')) problems.push(`content type ${type}, not JSON`);
    const problem = body === undefined ? undefined : matchPattern(pattern, body, trial);
    if (problem) problems.push(problem);
  }
  const missing = expect.events && eventsMismatch(expect.events, answer.body.split('\n'));
  if (missing) problems.push(`the stream has no line ${missing}`);
  if (problems.length > 0) return `${problems.join('\n')}\n--- the answer:\n${tail}`;
  for (const [name, value] of trial) bindings.set(name, value);
  return undefined;
}

/** A GET that ends by itself: safe to repeat. */
const isRead = (step: Step): boolean =>
  !/\s-X\s*(POST|PUT|PATCH|DELETE)\b/.test(step.command) && !/\s(-d|--data\S*)\s/.test(step.command) && !step.expect?.events;

/** Runs a CLI command from the repository against `url`: its exit code and what it printed. */
function runCli(command: string, url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: ROOT, env: { ...process.env, AGENTPLANE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Why the CLI's output is not the lines shown (in order, others between them allowed), or undefined. */
function outputDifference(shown: readonly string[], output: string, bindings: Bindings): string | undefined {
  const lines = output.split('\n').map((line) => line.trimEnd());
  const trial: Bindings = new Map(bindings);
  let at = 0;
  for (const want of shown) {
    while (at < lines.length && matchText(want, lines[at]!, new Map(trial)) !== undefined) at += 1;
    if (at === lines.length) return `no line ${JSON.stringify(want)}\n--- it printed:\n${output}`;
    matchText(want, lines[at]!, trial);
    at += 1;
  }
  for (const [name, value] of trial) bindings.set(name, value);
  return undefined;
}

for (const server of servers.values()) {
  const names = [...new Set(server.pages.map((page) => page.file))].join(', ');
  describe(`the examples of ${names}, run in order against a fresh embedded server`, () => {
    let api: AgentProcess;

    beforeAll(async () => {
      if (spawnSync('curl', ['--version']).status !== 0) throw new Error('curl is missing: apt-get install -y curl (.ci/run does)');
      // A short heartbeat: the event stream examples show a `: keep-alive` line.
      api = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'warn', SERVICE_SSE_HEARTBEAT_MS: '300', ...server.env }, readyTimeoutMs: 150_000 });
    }, 180_000);
    afterAll(async () => {
      await api?.stop();
    });

    for (const page of server.pages) {
      const bindings = bindingsOf.get(page.file)!;
      for (const step of page.steps) {
        it(`${page.file}:${step.line} ${step.command.split('\n')[0]}`, async () => {
          const unbound = /[0-9a-f]{2,}…/.exec(substitute(step.command, bindings));
          expect(unbound, `${unbound?.[0]} in the command stands for no value an answer above showed`).toBeNull();
          const command = substitute(step.command, bindings);
          if (!step.runs) {
            const result = await runCli(command, api.url);
            expect(result.code, `${page.file}:${step.line}\n${command}\n${result.stderr}`).toBe(0);
            const shown = step.comments.map((line) => line.trim()).filter((line) => line !== '');
            expect(outputDifference(shown, result.stdout, bindings), `${page.file}:${step.line}\n${command}`).toBeUndefined();
            return;
          }
          const events = step.expect?.events;
          const run = () =>
            runCurl(command, { baseUrl: api.url, timeoutMs: COMMAND_TIMEOUT_MS, enough: events && ((lines) => eventsMismatch(events, lines) === undefined) });
          let problem = difference(await run(), step.expect, bindings);
          for (const until = Date.now() + SETTLE_MS; problem !== undefined && isRead(step) && Date.now() < until; ) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            problem = difference(await run(), step.expect, bindings);
          }
          expect(problem, `${page.file}:${step.line}\n${command}`).toBeUndefined();
        });
      }
    }
  });
}
