import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { CHAT_CONFIG_VARIABLES } from '../../src/integrations/gateway/config.js';
import { WEBHOOK_CONFIG_VARIABLES } from '../../src/integrations/webhook/config.js';
import { TRACING_VARIABLES } from '../../src/observability/tracing.js';
import { SETTING_DOCS } from '../../scripts/settings/descriptions.js';
import { renderSettings, settingNames, settingsOf } from '../../scripts/settings/render.js';
import { docPages, ROOT } from './doc-pages.js';

const REFERENCE = 'docs/reference/settings.md';
const page = readFileSync(new URL('../../docs/reference/settings.md', import.meta.url), 'utf8');

/** The cells of a Markdown table row (`\|` inside a cell kept). */
const cellsOf = (row: string): string[] =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

/** A row of a settings table outside the reference: its setting, and its default when the table has a Default column. */
interface SettingRow {
  where: string;
  name: string;
  shownDefault?: string;
}

/** Every table row of `text` whose first cell is a setting name in backticks (`| \`SERVICE_PORT\` | …`). */
function settingRows(file: string, text: string): SettingRow[] {
  const rows: SettingRow[] = [];
  let header: string[] | undefined;
  text.split('\n').forEach((line, index) => {
    if (!line.startsWith('|')) {
      header = undefined;
      return;
    }
    if (!header) {
      header = cellsOf(line).map((cell) => cell.toLowerCase());
      return;
    }
    const cells = cellsOf(line);
    const name = /^`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`$/.exec(cells[0] ?? '')?.[1];
    if (!name) return;
    const column = header.indexOf('default');
    rows.push({ where: `${file}:${index + 1}`, name, ...(column > 0 ? { shownDefault: cells[column] } : {}) });
  });
  return rows;
}

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

/*
 * A guide may repeat the settings of its task in a table of its own (the webhook receiver's, the
 * Slack app's): each row names a setting the processes read, and a Default column says what the
 * reference says, so a default changed in the schema cannot be left stale in a guide.
 */
describe('settings tables outside the reference', () => {
  const reference = new Map(settingRows(REFERENCE, page).map((row) => [row.name, row.shownDefault]));
  const rows = docPages()
    .filter((file) => file !== REFERENCE)
    .flatMap((file) => settingRows(file, readFileSync(`${ROOT}/${file}`, 'utf8')));

  it('reads the reference and the guides that repeat settings', () => {
    expect(reference.get('SERVICE_PORT')).toBe('`8420`');
    expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(['WEBHOOK_PORT', 'SERVICE_JWT_MAX_AGE']));
  });

  it('name only settings the processes read (or OpenTelemetry variables they pass on)', () => {
    const known = new Set([...settingNames(), ...TRACING_VARIABLES]);
    expect(rows.filter((row) => !known.has(row.name)).map((row) => `${row.where}: ${row.name} is no setting`)).toEqual([]);
  });

  it('show the default the reference shows, where they have a Default column', () => {
    const stale = rows.filter((row) => row.shownDefault !== undefined && reference.has(row.name) && row.shownDefault !== reference.get(row.name));
    expect(stale.map((row) => `${row.where}: ${row.name} default ${row.shownDefault}, the reference says ${reference.get(row.name)}`)).toEqual([]);
  });

  it('reads a table as a reader does', () => {
    const sample = ['| Setting | Default | Meaning |', '|---|---|---|', '| `A_B` | `1` | a \\| b |', '', '| setting | meaning |', '|---|---|', '| `C_D` | `2` |'].join('\n');
    expect(settingRows('x.md', sample)).toEqual([
      { where: 'x.md:3', name: 'A_B', shownDefault: '`1`' },
      { where: 'x.md:7', name: 'C_D' },
    ]);
  });
});
