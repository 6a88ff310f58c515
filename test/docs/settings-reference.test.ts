import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { CHAT_CONFIG_VARIABLES } from '../../src/integrations/gateway/config.js';
import { WEBHOOK_CONFIG_VARIABLES } from '../../src/integrations/webhook/config.js';
import { SETTING_DOCS } from '../../scripts/settings/descriptions.js';
import { renderSettings, settingNames, settingsOf } from '../../scripts/settings/render.js';

const page = readFileSync(new URL('../../docs/reference/settings.md', import.meta.url), 'utf8');

/**
 * docs/reference/settings.md is the one table of settings: rendered from the configuration
 * schemas and the map of meanings, never edited by hand. A setting added to a schema without a
 * description (or a description left after its setting went) makes the rendering throw; a
 * description or schema changed without `npm run docs:settings` makes the page differ.
 */
describe('the settings reference', () => {
  it('covers every setting the processes read, and no other', () => {
    const read = [...CONFIG_VARIABLES, ...WEBHOOK_CONFIG_VARIABLES, ...CHAT_CONFIG_VARIABLES];
    expect([...settingNames()].sort()).toEqual([...new Set(read)].sort());
    expect(Object.keys(SETTING_DOCS).sort()).toEqual([...new Set(read)].sort());
  });

  it('is what `npm run docs:settings` renders from the schemas today', () => {
    expect(settingsOf(page)).toBe(renderSettings());
  });

  it('has one row per setting, with the default and range the schema gives', () => {
    const rows = [...page.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| (.*?) \| (.*?) \|/gm)];
    expect(rows.map((row) => row[1]).sort()).toEqual([...settingNames()].sort());
    const port = rows.find((row) => row[1] === 'SERVICE_PORT')!;
    expect([port[2], port[3]]).toEqual(['`8420`', 'integer 0–65535']);
  });

  it('refuses a setting without a description', () => {
    const saved = SETTING_DOCS.SERVICE_PORT;
    const docs = SETTING_DOCS as Record<string, unknown>;
    delete docs.SERVICE_PORT;
    try {
      expect(() => renderSettings()).toThrow(/add SERVICE_PORT/);
    } finally {
      docs.SERVICE_PORT = saved;
    }
  });
});
