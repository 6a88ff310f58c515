// Bundles the web console (console/) with esbuild: index.html, app.js, app.css. `npm run build`
// writes them to dist/console, which the compiled API serves; an API running from source
// (`npm start`, tests) calls buildConsole() in memory instead, so there is no extra step.
// Run alone: `node scripts/build-console.mjs` (prints the sizes, raw and gzipped).
import { join } from 'node:path';
import { bundlePage, isMain, ROOT, writePage } from './bundle-page.mjs';

const SOURCE = join(ROOT, 'console');
export const CONSOLE_DIST = join(ROOT, 'dist', 'console');

/** Builds the console in memory. Resolves a map of file name (`index.html`, `app.js`, `app.css`) to its bytes. */
export function buildConsole() {
  return bundlePage({ entry: join(SOURCE, 'src', 'main.tsx'), html: join(SOURCE, 'index.html'), tsconfig: join(SOURCE, 'tsconfig.json'), outdir: CONSOLE_DIST });
}

if (isMain(import.meta.url)) writePage(await buildConsole(), CONSOLE_DIST, 'console');
