import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadWebhooksConfig } from '../../src/integrations/webhook/config.js';

/*
 * The image, without a Docker engine: the Dockerfile's stages read as text, the entry script
 * run with a stand-in `node` that prints what it was asked to run, and the HEALTHCHECK script
 * run against loopback servers.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const ENTRY = join(ROOT, 'deploy/docker/agentplane');
const HEALTHCHECK = join(ROOT, 'deploy/docker/healthcheck.mjs');

interface Stage {
  name: string | undefined;
  instructions: string[];
}

/** Dockerfile instructions (continuation lines joined, comments dropped), grouped by stage. */
function stages(dockerfile: string): Stage[] {
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const result: Stage[] = [];
  for (const instruction of instructions) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(instruction);
    if (from) result.push({ name: from[1], instructions: [] });
    else result.at(-1)?.instructions.push(instruction);
  }
  return result;
}

const dockerStages = stages(read('Dockerfile'));
const runtime = dockerStages.at(-1)!;
const runtimeLines = (keyword: string): string[] => runtime.instructions.filter((i) => i.startsWith(`${keyword} `));

/** Runs the entry script with a `node` that prints its arguments instead of running them. */
function entry(args: string[]): string {
  const bin = mkdtempSync(join(tmpdir(), 'agentplane-entry-'));
  try {
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "$@"\n');
    chmodSync(join(bin, 'node'), 0o755);
    const run = spawnSync('sh', [ENTRY, ...args], { encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim();
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

describe('Dockerfile', () => {
  it('builds in stages and installs only production dependencies into the image', () => {
    expect(dockerStages.length).toBeGreaterThanOrEqual(3);
    const deps = dockerStages.find((s) => s.instructions.some((i) => /npm ci\b.*--omit=dev/.test(i)));
    expect(deps?.name).toBeDefined();
    expect(runtimeLines('COPY')).toContain(`COPY --from=${deps!.name} /app/node_modules ./node_modules`);
    expect(runtime.instructions.filter((i) => /\bnpm (ci|install)\b/.test(i))).toEqual([]);
  });

  it("links node_modules/@agentplane/server to the package, so agents mounted under /app import '@agentplane/server'", () => {
    // test/packaging/pack.test.ts runs this link's layout: an agents package under the package directory.
    const deps = dockerStages.find((s) => s.instructions.some((i) => /npm ci\b.*--omit=dev/.test(i)))!;
    expect(deps.instructions.join('\n')).toMatch(/&& mkdir -p node_modules\/@agentplane && ln -s \.\.\/\.\. node_modules\/@agentplane\/server$/m);
    expect(deps.instructions).toContain('WORKDIR /app');
    const pkg = JSON.parse(read('package.json')) as { name: string; exports: Record<string, unknown> };
    expect(pkg.name).toBe('@agentplane/server');
    expect(pkg.exports).toHaveProperty('.');
  });

  it('installs the LangGraph peer dependencies into the image, at the versions of package.json (graphs run in it)', () => {
    const deps = dockerStages.find((s) => s.instructions.some((i) => /npm ci\b.*--omit=dev/.test(i)))!;
    const run = deps.instructions.find((i) => /npm ci\b.*--omit=dev/.test(i))!;
    // What runs before `npm ci`, run here on a copy of package.json.
    const before = run.replace(/^RUN\s+/, '').split(/\s*&&\s*npm ci\b/)[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-deps-'));
    try {
      writeFileSync(join(dir, 'package.json'), read('package.json'));
      const moved = spawnSync('sh', ['-c', before], { cwd: dir, encoding: 'utf8' });
      expect(moved.status, moved.stderr).toBe(0);
      const original = JSON.parse(read('package.json')) as Record<string, Record<string, string>>;
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
      const peers = Object.keys(original.peerDependencies!);
      expect(peers).toEqual(expect.arrayContaining(['@langchain/langgraph', '@langchain/core']));
      for (const name of peers) {
        expect(pkg.dependencies![name], name).toBe(original.devDependencies![name]);
        expect(pkg.devDependencies![name], name).toBeUndefined();
      }
      // Nothing else moved.
      expect(Object.keys(pkg.dependencies!).sort()).toEqual([...Object.keys(original.dependencies!), ...peers].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('puts the compiled code in the image, with the non-TypeScript files beside it (the Lua scripts)', () => {
    const assets = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true }).filter(
      (file) => file.isFile() && !file.name.endsWith('.ts'),
    );
    expect(assets.some((file) => file.name.endsWith('.lua'))).toBe(true);
    const build = dockerStages.find((s) => s.instructions.some((i) => i.includes('npm run build')))!;
    // `npm run build` copies them (scripts/copy-assets.mjs); the build stage must have that script.
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toMatch(/node scripts\/copy-assets\.mjs/);
    expect(read('scripts/copy-assets.mjs')).toMatch(/!path\.endsWith\('\.ts'\)/);
    expect(build.instructions).toContain('COPY scripts ./scripts');
    expect(runtimeLines('COPY')).toContain(`COPY --from=${build.name} /app/dist ./dist`);
    expect(runtimeLines('COPY')).toContain('COPY package.json ./');
  });

  it('runs as a numeric non-root user under tini, with a HEALTHCHECK', () => {
    const user = runtimeLines('USER').at(-1);
    expect(user).toMatch(/^USER [1-9]\d*(:\d+)?$/);
    expect(runtimeLines('RUN').join(' ')).toMatch(/apt-get install .*\btini\b/);
    expect(runtimeLines('ENTRYPOINT')).toEqual(['ENTRYPOINT ["/usr/bin/tini", "--", "agentplane"]']);
    expect(runtimeLines('CMD')).toEqual(['CMD ["api"]']);
    expect(runtimeLines('HEALTHCHECK').at(0)).toMatch(/CMD \["node", "\/app\/deploy\/healthcheck\.mjs"\]$/);
    expect(runtimeLines('COPY')).toContain('COPY deploy/docker/healthcheck.mjs ./deploy/healthcheck.mjs');
    expect(runtimeLines('COPY')).toContain('COPY --chmod=0755 deploy/docker/agentplane /usr/local/bin/agentplane');
  });

  it('exposes the default port of each process', () => {
    const ports = [loadConfig({}).SERVICE_PORT, loadConfig({}).WORKER_PORT, loadWebhooksConfig({ WEBHOOK_INSECURE: 'true' }).port];
    expect(runtimeLines('EXPOSE')).toEqual([`EXPOSE ${ports.join(' ')}`]);
  });

  it('copies from the build context only what .dockerignore lets in', () => {
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    const sources = dockerStages
      .flatMap((s) => s.instructions)
      .filter((i) => i.startsWith('COPY ') && !i.includes('--from='))
      .flatMap((i) => i.split(/\s+/).slice(1).filter((word) => !word.startsWith('--')).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    const outside = sources.filter((source) => !allowed.some((a) => source === a || source.startsWith(`${a}/`)));
    expect(outside).toEqual([]);
    const rules = read('.dockerignore').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(rules[0], 'an allow-list: exclude everything, then let in what the build needs').toBe('*');
  });
});

describe('deploy/docker/agentplane (the entry point)', () => {
  const builtFrom = (output: string): string => {
    const match = /^\/app\/dist\/(.+)\.js\b/.exec(output);
    if (!match) throw new Error(`not a compiled entry: ${output}`);
    return `${match[1]}.ts`;
  };
  const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };

  it.each([
    ['api', 'src/main/api.ts'],
    ['worker', 'src/main/worker.ts'],
    ['webhooks', 'src/main/webhooks.ts'],
  ])('`%s` runs the compiled %s, which the build compiles', (role, source) => {
    const output = entry([role, '--trace-warnings']);
    expect(builtFrom(output)).toBe(source);
    expect(output.endsWith(' --trace-warnings')).toBe(true);
    expect(build.include.some((dir) => source.startsWith(`${dir}/`))).toBe(true);
    expect(existsSync(join(ROOT, source)), `${source} does not exist: the image's \`${role}\` command would fail`).toBe(true);
  });

  it('runs the API without arguments', () => {
    expect(builtFrom(entry([]))).toBe('src/main/api.ts');
  });

  it('runs any other command as given', () => {
    const run = spawnSync('sh', [ENTRY, 'echo', 'hello'], { encoding: 'utf8' });
    expect(run.stdout).toBe('hello\n');
  });

  it('execs node, so that SIGTERM from tini reaches the process', () => {
    const script = read('deploy/docker/agentplane');
    const launches = script.split('\n').filter((line) => /\bnode\b/.test(line) && !line.trimStart().startsWith('#'));
    expect(launches.length).toBe(3);
    for (const line of launches) expect(line).toMatch(/\bexec node /);
  });
});

describe('deploy/docker/healthcheck.mjs (the HEALTHCHECK)', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  async function serve(status: number): Promise<number> {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/health/live' ? status : 404).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** A loopback port nothing listens on. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  /** The script's exit code. Spawned asynchronously: the servers it asks run in this process. */
  function check(env: Record<string, number>): Promise<number | null> {
    const vars = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
    const child = spawn(process.execPath, [HEALTHCHECK], { env: { PATH: process.env.PATH, ...vars }, stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve(code));
    });
  }

  it('is healthy when the process of this container answers on its own port', async () => {
    const closed = await closedPort();
    const live = await serve(200);
    expect(await check({ SERVICE_PORT: live, WORKER_PORT: closed, WEBHOOK_PORT: closed })).toBe(0);
    expect(await check({ SERVICE_PORT: closed, WORKER_PORT: live, WEBHOOK_PORT: closed })).toBe(0);
    expect(await check({ SERVICE_PORT: closed, WORKER_PORT: closed, HEALTHCHECK_PORT: live })).toBe(0);
  });

  it('counts a receiver without a probe route (404) as alive', async () => {
    const closed = await closedPort();
    const receiver = await serve(404);
    expect(await check({ SERVICE_PORT: closed, WORKER_PORT: closed, WEBHOOK_PORT: receiver })).toBe(0);
  });

  it('is unhealthy when nothing answers, or only with a server error', async () => {
    const closed = await closedPort();
    const broken = await serve(500);
    expect(await check({ SERVICE_PORT: closed, WORKER_PORT: closed, WEBHOOK_PORT: closed })).toBe(1);
    expect(await check({ SERVICE_PORT: broken, WORKER_PORT: closed, WEBHOOK_PORT: closed })).toBe(1);
  });

  it('falls back to the default port of each process', () => {
    const script = read('deploy/docker/healthcheck.mjs');
    expect(script).toContain(`process.env.SERVICE_PORT || ${loadConfig({}).SERVICE_PORT}`);
    expect(script).toContain(`process.env.WORKER_PORT || ${loadConfig({}).WORKER_PORT}`);
    expect(script).toContain(`process.env.WEBHOOK_PORT || ${loadWebhooksConfig({ WEBHOOK_INSECURE: 'true' }).port}`);
  });
});
