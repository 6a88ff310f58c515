import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { WEBHOOK_CONFIG_VARIABLES } from '../../src/integrations/webhook/config.js';

const contract = readFileSync(new URL('../../docs/http-contract.md', import.meta.url), 'utf8');
const settings = contract.slice(contract.indexOf('\n## Settings\n'));

it('docs/http-contract.md sends its reader to the one settings reference, which describes every environment variable', () => {
  const reference = readFileSync(new URL('../../docs/reference/settings.md', import.meta.url), 'utf8');
  expect(settings).toContain('](reference/settings.md)');
  expect(settings).not.toMatch(/^\| `[A-Z_]+` \|/m);
  const missing = [...CONFIG_VARIABLES, ...WEBHOOK_CONFIG_VARIABLES].filter((name) => !reference.includes(`| \`${name}\` |`));
  expect(missing).toEqual([]);
});

it('docs/http-contract.md lists every error code the API renders, with its status', async () => {
  const { statusOf } = await import('../../src/http/errors.js');
  const codes = [...contract.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
  const rendered = ['bad_request', 'invalid_cron', 'unknown_agent', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed',
    'conflict', 'gone', 'precondition_failed', 'payload_too_large', 'unsupported_media_type', 'idempotency_key_reused', 'rate_limited', 'internal', 'unavailable'] as const;
  expect(codes).toEqual(rendered.map((code) => [code, statusOf(code)]));
});
