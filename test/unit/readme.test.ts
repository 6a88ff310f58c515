import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { WEBHOOK_CONFIG_VARIABLES } from '../../src/integrations/webhook/config.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const settings = readFileSync(new URL('../../docs/reference/settings.md', import.meta.url), 'utf8');

it('documents every environment variable the processes read in the settings reference', () => {
  const missing = [...CONFIG_VARIABLES, ...WEBHOOK_CONFIG_VARIABLES].filter((name) => !settings.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

it('starts with the two commands of a fresh machine, and stays short', () => {
  expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  expect(readme).toContain('npm ci && npm start');
  expect(readme).toContain('npm test');
  expect(readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toMatch(/npm test/);
});
