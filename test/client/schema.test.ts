import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { generateClientSchema, SCHEMA_FILE } from '../../scripts/generate-client.js';
import { ROOT } from '../support/build.js';

const CLIENT_DIR = join(ROOT, 'src/client');

describe('the typed client', () => {
  it('has src/client/schema.ts in step with the routes (else: npm run client:generate)', async () => {
    const expected = await generateClientSchema();
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed.includes('"/api/runs/wait"'), 'the schema lists the routes').toBe(true);
    expect(committed === expected, 'src/client/schema.ts is stale: run `npm run client:generate`').toBe(true);
  });

  it('imports nothing but its own modules and openapi-fetch, so browsers can load it', async () => {
    for (const file of readdirSync(CLIENT_DIR).filter((name) => name.endsWith('.ts'))) {
      const specifiers = [...readFileSync(join(CLIENT_DIR, file), 'utf8').matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]);
      expect(specifiers.filter((s) => !s!.startsWith('./') && s !== 'openapi-fetch'), file).toEqual([]);
    }
    // Our modules bundled for the browser: no Node built-in to resolve, no Node global used
    // (openapi-fetch is browser-first itself).
    const bundle = await build({
      entryPoints: [join(CLIENT_DIR, 'index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      external: ['openapi-fetch'],
    });
    const code = bundle.outputFiles[0]!.text;
    expect(code).toContain('/api/runs/wait');
    expect(code).not.toMatch(/\b(?:process\.|Buffer\b|require\(|node:)/);
  });
});
