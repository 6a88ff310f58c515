import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess, type LogLine } from '../support/processes.js';
import { freePort } from '../support/redis.js';

/**
 * What an operator reads from a process (src/main/api.ts spawned as `npm start` runs it):
 * start-up errors as one line naming the setting, one info line per run that ends, probes
 * at debug only, the address as configured, and LOG_FORMAT=pretty for a terminal.
 */

const API = 'src/main/api.ts';
const EMBEDDED = { REDIS_URL: undefined, AGENTS_MODULE: 'test/fixtures/agents.ts' };
const PROBES = ['/healthz', '/health', '/health/live', '/health/ready', '/metrics'];
const INFO = 30;

/** A server holding a loopback port, so that the process cannot have it. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { port, server };
}

describe('start-up errors: one line naming the setting, no stack trace, exit code 1', () => {
  const rows: [string, Record<string, string | undefined>, string, RegExp][] = [
    ['AGENTS_MODULE names no file', { AGENTS_MODULE: 'test/fixtures/no-such-agents.js' }, 'AGENTS_MODULE', /no file at .*no-such-agents\.js/],
    ['REDIS_URL without a scheme', { REDIS_URL: 'localhost:6379' }, 'REDIS_URL', /redis:\/\/ or rediss:\/\//],
    ['LOG_FORMAT unknown', { LOG_FORMAT: 'text', REDIS_URL: undefined }, 'LOG_FORMAT', /json|pretty/],
    [
      "a setting of the agents module itself (a .ts module's own ConfigError)",
      { AGENTS_MODULE: 'examples/llm/agents.ts', REDIS_URL: undefined, OPENAI_API_KEY: undefined },
      'OPENAI_API_KEY',
      /not set/,
    ],
  ];

  async function failedStart(env: Record<string, string | undefined>, port?: number): Promise<{ code: number | null; lines: LogLine[] }> {
    const proc = await startProcess({ entry: API, env, ready: 'spawned', ...(port ? { port } : {}) });
    const code = await proc.exited;
    return { code, lines: proc.lines };
  }

  function expectOneLine(lines: LogLine[], setting: string, reason: RegExp): void {
    const errors = lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '');
    expect(errors.map((l) => l.text)).toEqual([expect.stringContaining(`${setting}:`)]);
    expect(errors[0]!.text).toMatch(reason);
    expect(lines.filter((l) => /^\s+at /.test(l.text))).toEqual([]);
  }

  it.each(rows)('%s', async (_name, env, setting, reason) => {
    const { code, lines } = await failedStart(env);
    expect(code).toBe(1);
    expectOneLine(lines, setting, reason);
  });

  it('SERVICE_PORT in use', async () => {
    const held = await holdPort();
    try {
      const { code, lines } = await failedStart({ REDIS_URL: undefined }, held.port);
      expect(code).toBe(1);
      expectOneLine(lines, 'SERVICE_PORT', new RegExp(`port ${held.port} on 127\\.0\\.0\\.1 is already in use`));
    } finally {
      held.server.close();
    }
  });
});

describe('logs of a running API (JSON lines, LOG_LEVEL=info)', () => {
  let proc: AgentProcess;

  beforeAll(async () => {
    proc = await startProcess({ entry: API, env: { ...EMBEDDED, SERVICE_HOST: '0.0.0.0', LOG_LEVEL: 'info' } });
  });
  afterAll(() => proc?.stop());

  it('prints the address as configured (0.0.0.0), with a URL to open', async () => {
    const line = await proc.waitForLine((l) => l.json?.msg === 'agentplane api listening');
    expect(line.json).toMatchObject({ address: `0.0.0.0:${proc.port}`, url: `http://localhost:${proc.port}` });
  });

  it('says in one warning line that authentication is off, and who can call it on 0.0.0.0', async () => {
    await proc.waitForLine((l) => /SERVICE_AUTH=none/.test(String(l.json?.msg)));
    const lines = proc.lines.filter((l) => /SERVICE_AUTH=none/.test(String(l.json?.msg)));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.json).toMatchObject({ level: 40 });
    expect(lines[0]!.json!.msg).toBe(
      `SERVICE_AUTH=none: no authentication; anyone who reaches 0.0.0.0:${proc.port} can call it, by the Host names localhost, 127.0.0.1, [::1] (SERVICE_ALLOWED_HOSTS), from web pages of loopback origins (SERVICE_CORS_ORIGINS)`,
    );
  });

  it.each([
    ['echo', { text: 'hi' }, 'completed', undefined],
    ['flaky', {}, 'failed', 'work needs fixed: true'],
  ] as const)('logs the end of a %s run once, at info, with its run id and duration', async (agent, input, status, error) => {
    const answer = await call(`${proc.url}/api/runs/wait`, { method: 'POST', json: { agent_id: agent, input, wait_ms: 20_000 } });
    expect(answer.status).toBe(200);
    const run = answer.body as { id: string; status: string };
    expect(run.status).toBe(status);
    const line = await proc.waitForLine((l) => l.json?.run_id === run.id && l.json.msg === `run ${status}`);
    expect(line.json).toMatchObject({ level: INFO, agent_id: agent, status, duration_ms: expect.any(Number) });
    expect(line.json!.duration_ms).toBeGreaterThanOrEqual(0);
    if (error) expect(line.json!.error).toBe(error);
    const ends = proc.lines.filter((l) => l.json?.run_id === run.id && /^run (completed|failed|cancelled)$/.test(String(l.json.msg)));
    expect(ends).toHaveLength(1);
  });

  it('logs probe and /metrics requests below info, other requests at info', async () => {
    for (const path of PROBES) expect((await fetch(`${proc.url}${path}`)).status).toBe(200);
    const marker = await call(`${proc.url}/api/sessions?limit=7`);
    expect(marker.status).toBe(200);
    await proc.waitForLine((l) => l.json?.msg === 'request' && l.json.path === '/api/sessions' && l.json.level === INFO);
    const probeLines = proc.lines.filter((l) => l.json?.msg === 'request' && PROBES.includes(String(l.json.route)));
    expect(probeLines).toEqual([]);
  });
});

describe('the default address without authentication', () => {
  let proc: AgentProcess;

  beforeAll(async () => {
    proc = await startProcess({ entry: API, env: { ...EMBEDDED, SERVICE_HOST: undefined, SERVICE_AUTH: undefined, LOG_LEVEL: 'info' } });
  });
  afterAll(() => proc?.stop());

  it('listens on loopback and says that only this machine can call it', async () => {
    const line = await proc.waitForLine((l) => l.json?.msg === 'agentplane api listening');
    expect(line.json).toMatchObject({ address: `127.0.0.1:${proc.port}` });
    const warning = await proc.waitForLine((l) => /SERVICE_AUTH=none/.test(String(l.json?.msg)));
    expect(warning.json?.msg).toBe(
      `SERVICE_AUTH=none: no authentication; only this machine can call 127.0.0.1:${proc.port}, by the Host names localhost, 127.0.0.1, [::1] (SERVICE_ALLOWED_HOSTS), from web pages of loopback origins (SERVICE_CORS_ORIGINS)`,
    );
  });
});

describe('LOG_FORMAT=pretty', () => {
  let proc: AgentProcess;

  beforeAll(async () => {
    proc = await startProcess({ entry: API, env: { ...EMBEDDED, LOG_FORMAT: 'pretty', LOG_LEVEL: 'debug' } });
  });
  afterAll(() => proc?.stop());

  it('writes readable text, not JSON: a time, the level, the message, then one field per line', async () => {
    const start = await proc.waitForLine((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: agentplane api listening$/.test(l.text));
    const after = proc.lines.slice(proc.lines.indexOf(start) + 1, proc.lines.indexOf(start) + 6).map((l) => l.text);
    expect(after).toContain(`    address: "127.0.0.1:${proc.port}"`);
    expect(after).toContain('    mode: "memory"');
    expect(proc.lines.filter((l) => l.json !== undefined)).toEqual([]);
    // No colour codes when the output is not a terminal.
    expect(proc.lines.some((l) => l.text.includes('\u001b['))).toBe(false);
  });

  it('shows the probes at debug', async () => {
    // startProcess polled /health/ready until it answered 200.
    const fieldsOf = (i: number) => proc.lines.slice(i + 1, i + 8).map((l) => l.text);
    const probes = proc.lines.flatMap((l, i) => (/\] DEBUG: request$/.test(l.text) ? [fieldsOf(i)] : []));
    expect(probes.some((fields) => fields.includes('    route: "/health/ready"'))).toBe(true);
  });
});
