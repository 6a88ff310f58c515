import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { matchPattern, matchText, parsePattern, substitute, type Bindings } from './answer-pattern.js';
import { readmeSteps, type Expectation, type Step } from './readme-steps.js';
import { eventsMismatch, runCurl, type CurlAnswer } from './run-curl.js';

/**
 * The README's curl examples, pasted in order as a new user would, against a fresh `npm start`
 * (the embedded server, nothing stored yet): each answers the status, headers and JSON shape
 * the comment under it shows (see readme-steps.ts for how a comment is read, answer-pattern.ts
 * for `…` and placeholders). An example without such a comment must answer 2xx.
 *
 * Placeholders (`0193…`) hold within a section: the first answer that shows one binds it, the
 * commands after it use the value. A read (a GET that is not a stream) that follows a run
 * started with 202 may see the run before its worker got to it, as a person reading a moment
 * later would not: a read that does not match is read again until it does, for a few seconds.
 *
 * "Your own agents" runs against its own server, started as the section's command says (both
 * example folders of the repository at once).
 */

/** A fresh `npm start` and the sections run against it. */
interface Server {
  sections: readonly string[];
  env: Record<string, string>;
  /** The command of the sections that starts this server, when they show one. */
  command?: string;
}

const SERVERS: readonly Server[] = [
  // A short heartbeat: the Live events example shows a `: keep-alive` line.
  { sections: ['API', 'Runs and approvals', 'Live events', 'Schedules'], env: { SERVICE_SSE_HEARTBEAT_MS: '300' } },
  {
    sections: ['Your own agents'],
    env: { AGENTS_MODULE: 'examples/agents/index.js', SERVICE_LANGGRAPH_JSON: 'examples/langgraph/langgraph.json' },
    command: 'AGENTS_MODULE=examples/agents/index.js SERVICE_LANGGRAPH_JSON=examples/langgraph/langgraph.json npm start',
  },
];
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** How long a read may take to show what a run started before it leads to. */
const SETTLE_MS = 10_000;
const COMMAND_TIMEOUT_MS = 30_000;

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

for (const server of SERVERS) {
  describe(`the README examples of ${server.sections.join(', ')}, run in order against a fresh embedded server`, () => {
    const steps = readmeSteps(README, server.sections);
    let api: AgentProcess;
    const bindings = new Map<string, Bindings>(server.sections.map((section) => [section, new Map()]));

    beforeAll(async () => {
      if (spawnSync('curl', ['--version']).status !== 0) throw new Error('curl is missing: apt-get install -y curl (.ci/run does)');
      api = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'warn', ...server.env }, readyTimeoutMs: 150_000 });
    }, 180_000);
    afterAll(async () => {
      await api?.stop();
    });

    it('finds examples with answers in every tested section', () => {
      for (const section of server.sections) {
        expect(
          steps.filter((step) => step.section === section && step.runs && step.expect),
          section,
        ).not.toHaveLength(0);
      }
      if (server.command) expect(steps.map((step) => step.command)).toContain(server.command);
    });

    for (const step of steps.filter((s) => s.runs)) {
      it(`README.md:${step.line} ${step.command.split('\n')[0]}`, async () => {
        const sectionBindings = bindings.get(step.section)!;
        const unbound = /[0-9a-f]{2,}…/.exec(substitute(step.command, sectionBindings));
        expect(unbound, `${unbound?.[0]} in the command stands for no value an answer above showed`).toBeNull();
        const command = substitute(step.command, sectionBindings);
        const events = step.expect?.events;
        const run = () =>
          runCurl(command, { baseUrl: api.url, timeoutMs: COMMAND_TIMEOUT_MS, enough: events && ((lines) => eventsMismatch(events, lines) === undefined) });

        let problem = difference(await run(), step.expect, sectionBindings);
        for (const until = Date.now() + SETTLE_MS; problem !== undefined && isRead(step) && Date.now() < until; ) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          problem = difference(await run(), step.expect, sectionBindings);
        }
        expect(problem, `README.md:${step.line}\n${command}`).toBeUndefined();
      });
    }
  });
}
