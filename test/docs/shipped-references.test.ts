import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/**
 * The package ships src/ compiled (its comments in the .d.ts and .js files) and its Lua scripts,
 * with README.md (npm always packs it) and what package.json "files" lists. A comment that sends
 * a user of the package to a document must send them to one they have.
 */
it('the shipped sources name no document the package leaves out', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const shipped = (name: string) => name === 'README.md' || pkg.files.some((entry) => !entry.startsWith('!') && name.startsWith(`${entry}/`));
  const dangling = filesUnder(join(ROOT, 'src')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/[\w./-]*\b[\w-]+\.md\b/g)]
      .map((m) => m[0])
      .filter((name) => !shipped(name))
      .map((name) => `${relative(ROOT, file)}: ${name}`),
  );
  expect(dangling).toEqual([]);
});
