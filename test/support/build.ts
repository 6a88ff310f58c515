import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

/**
 * `npm run build` once for every test file that needs the compiled package (dist/): the
 * first caller builds under a lock (an atomic mkdir), the others wait for it. A build is
 * fresh while no file under src/ (or the build's own inputs) is newer than its stamp.
 */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STAMP = join(ROOT, 'dist/.build-stamp');
const LOCK = join(ROOT, '.build-lock');
const INPUTS = ['src', 'console', 'examples/langgraph/chat-page', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts'];

function newestInput(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestInput(join(path, entry)));
  return newest;
}

function fresh(): boolean {
  try {
    return statSync(STAMP).mtimeMs >= Math.max(...INPUTS.map((p) => newestInput(join(ROOT, p))));
  } catch {
    return false;
  }
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch {
    // A lock older than five minutes is left by a killed run.
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > 300_000) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      /* gone meanwhile */
    }
    return false;
  }
}

function build(): void {
  const started = Date.now();
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  writeFileSync(STAMP, String(started));
  // Stamped with the build's start: a file saved during the build makes the next call rebuild.
  utimesSync(STAMP, started / 1000, started / 1000);
}

/** Builds dist/ unless a fresh build is there; safe to call from test files running in parallel. */
export async function ensureBuilt(): Promise<void> {
  for (;;) {
    if (fresh()) return;
    if (tryLock()) {
      try {
        if (!fresh()) build();
        return;
      } finally {
        rmSync(LOCK, { recursive: true, force: true });
      }
    }
    await waitFor('the build another test file runs', () => !existsSync(LOCK) || fresh(), 240_000, 200);
  }
}
