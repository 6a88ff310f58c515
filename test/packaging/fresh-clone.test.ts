import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readmeAgentsModule } from '../docs/doc-pages.js';
import { call } from '../support/app.js';
import { ROOT } from '../support/build.js';
import { startProcess } from '../support/processes.js';

/*
 * The first day, as README's "Your own agents" tells it: a fresh `git clone` (committed files
 * only) that has run nothing but `npm ci`, `npm pack` there (its prepack builds), the tarball
 * installed into a project made by `npm init -y` (npm 11 writes "type": "commonjs"), README's
 * agents.js beside it, and `npx --no-install agentplane dev` running its agent. Slow (an install and a
 * build): the npm cache serves the packages (`--prefer-offline`).
 */

const work = mkdtempSync(join(tmpdir(), 'agentplane-clone-'));
const clone = join(work, 'clone');
const project = join(work, 'project');
let tarball = '';

/** Runs a command to its end, bounded; rejects with its output when it fails. */
function succeed(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const killed = error?.killed ? ` (killed after ${timeoutMs} ms)` : '';
      if (error) reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed${killed}: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** README's agents.js, as a new user copies it: the block of README itself. */
const README_AGENTS = readmeAgentsModule();

beforeAll(async () => {
  await succeed('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], work, 120_000);
  // --ignore-scripts: the dependencies' install scripts (native builds for testcontainers'
  // ssh2) are not what this test is about, and take minutes on a loaded machine.
  await succeed('npm', ['ci', '--prefer-offline', '--ignore-scripts'], clone, 1_200_000);
  await succeed('npm', ['pack'], clone, 300_000);
  tarball = join(clone, readdirSync(clone).find((name) => /^agentplane-server-.*\.tgz$/.test(name)) ?? 'no-tarball');
  mkdirSync(project);
  await succeed('npm', ['init', '-y'], project, 60_000);
  await succeed('npm', ['install', tarball, '--prefer-offline'], project, 300_000);
  writeFileSync(join(project, 'agents.js'), README_AGENTS);
}, 1_800_000);

// The clone's node_modules is large (minutes to remove on a busy disk): a process of its own
// removes the directory after the test file has ended.
afterAll(() => {
  spawn('rm', ['-rf', work], { detached: true, stdio: 'ignore' }).unref();
});

it('packs the built package, and the tarball is ignored by git', async () => {
  const listed = await succeed('tar', ['-tzf', tarball], work, 60_000);
  expect(listed.split('\n')).toEqual(expect.arrayContaining(['package/dist/src/cli/main.js', 'package/dist/src/index.js', 'package/dist/src/index.d.ts']));
  expect(await succeed('git', ['status', '--porcelain'], clone, 60_000)).toBe('');
}, 120_000);

it('runs README\'s agents.js in an `npm init -y` project with `npx --no-install agentplane dev`', async () => {
  expect((await succeed('npx', ['--no-install', 'agentplane', '--version'], project, 60_000)).trim()).toBe('0.1.0');
  // What `npx --no-install agentplane` runs: the package's bin, linked in node_modules/.bin.
  const dev = await startProcess({
    cwd: project,
    entry: 'node_modules/.bin/agentplane',
    args: ['dev'],
    plainNode: true,
    env: { AGENTS_MODULE: './agents.js', LOG_LEVEL: 'warn', REDIS_URL: undefined },
    readyTimeoutMs: 150_000,
  });
  try {
    const run = await call(`${dev.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'greeter', input: { name: 'Ada' }, wait_ms: 30_000 } });
    expect(run.body).toMatchObject({ status: 'completed', state: { greeting: 'Hello, Ada!' } });
  } finally {
    await dev.stop();
  }
}, 240_000);
