// One web page bundled with esbuild, the way the console and the chat example are built:
// index.html beside app.js and app.css (the CSS its sources import). Kept apart from the page
// scripts so both build alike; they call bundlePage() in memory and writePage() at build time.
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Bundles `entry` (TSX on preact) into app.js and app.css, with the page's `html` as
 * index.html. Resolves a map of file name to bytes. `alias` maps module names to others
 * (e.g. react → preact/compat). Browser targets: the last two years of evergreen browsers.
 */
export async function bundlePage({ entry, html, tsconfig, outdir, alias = {} }) {
  const result = await build({
    entryPoints: { app: entry },
    outdir,
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    alias,
    legalComments: 'eof',
    tsconfig,
    logLevel: 'silent',
  });
  const files = new Map([['index.html', readFileSync(html)]]);
  for (const output of result.outputFiles) files.set(output.path.slice(output.path.lastIndexOf('/') + 1), Buffer.from(output.contents));
  return files;
}

/** Bytes of each file and of all, raw and gzipped. */
export function pageSizes(files) {
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

/** Replaces `dir` with the files, and prints their sizes under `label`. */
export function writePage(files, dir, label) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  const sizes = pageSizes(files);
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  for (const file of sizes.each) process.stdout.write(`${relative(ROOT, join(dir, file.name))}  ${kib(file.raw)}  (gzip ${kib(file.gzip)})\n`);
  process.stdout.write(`${label}: ${kib(sizes.raw)}, ${kib(sizes.gzip)} gzipped\n`);
}

/** Whether the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl) {
  return Boolean(process.argv[1]) && realpathSync(process.argv[1]) === fileURLToPath(moduleUrl);
}
