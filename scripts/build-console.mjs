// Bundles the web console (console/) with esbuild: index.html, app.js, app.css. `npm run build`
// writes them to dist/console, which the compiled API serves; an API running from source
// (`npm start`, tests) calls buildConsole() in memory instead, so there is no extra step.
// Run alone: `node scripts/build-console.mjs` (prints the sizes, raw and gzipped).
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SOURCE = join(ROOT, 'console');
export const CONSOLE_DIST = join(ROOT, 'dist', 'console');

/**
 * Builds the console in memory. Resolves a map of file name (`index.html`, `app.js`,
 * `app.css`) to its bytes. Browser targets: the last two years of evergreen browsers.
 */
export async function buildConsole() {
  const result = await build({
    entryPoints: { app: join(SOURCE, 'src', 'main.tsx') },
    outdir: join(ROOT, 'dist', 'console'),
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'eof',
    tsconfig: join(SOURCE, 'tsconfig.json'),
    logLevel: 'silent',
  });
  const files = new Map([['index.html', readFileSync(join(SOURCE, 'index.html'))]]);
  for (const output of result.outputFiles) files.set(output.path.slice(output.path.lastIndexOf('/') + 1), Buffer.from(output.contents));
  return files;
}

/** Bytes of each file and of all, raw and gzipped. */
export function consoleSizes(files) {
  let raw = 0;
  let gzip = 0;
  const each = [...files].map(([name, bytes]) => {
    const zipped = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzip += zipped;
    return { name, raw: bytes.length, gzip: zipped };
  });
  return { each, raw, gzip };
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await buildConsole();
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  mkdirSync(CONSOLE_DIST, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(CONSOLE_DIST, name), bytes);
  const sizes = consoleSizes(files);
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  for (const file of sizes.each) process.stdout.write(`dist/console/${file.name}  ${kib(file.raw)}  (gzip ${kib(file.gzip)})\n`);
  process.stdout.write(`console: ${kib(sizes.raw)}, ${kib(sizes.gzip)} gzipped\n`);
}
