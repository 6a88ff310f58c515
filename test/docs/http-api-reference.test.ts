import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/app.js';

const PAGE = new URL('../../docs/reference/http-api.md', import.meta.url);
const BEGIN = '<!-- routes: generated from /swagger/doc.json; do not edit -->';
const END = '<!-- routes: end -->';
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head'] as const;

interface OpenApi {
  tags?: { name: string }[];
  paths: Record<string, Partial<Record<(typeof METHODS)[number], { summary?: string; tags?: string[] }>>>;
}

/** The route list of the reference page: one table per tag, in the document's order. */
function routeTables(doc: OpenApi): string {
  const rows = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      if (!rows.has(tag)) rows.set(tag, []);
      rows.get(tag)!.push(`| \`${method.toUpperCase()}\` | \`${path}\` | ${(operation.summary ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ')} |`);
    }
  }
  const parts = [BEGIN, ''];
  for (const [tag, lines] of rows) parts.push(`### ${tag}`, '', '| Method | Path | What it does |', '|---|---|---|', ...lines, '');
  parts.push(END);
  return parts.join('\n');
}

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

/**
 * docs/reference/http-api.md lists every route of the OpenAPI document the API serves, with its
 * summary: a route added, removed or renamed without the page fails here.
 * `UPDATE_DOCS=1` rewrites the list instead.
 */
it('lists every route of the served OpenAPI document', async () => {
  const doc = (await (await fetch(`${api.url}/swagger/doc.json`)).json()) as OpenApi;
  const page = readFileSync(PAGE, 'utf8');
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  expect(start, 'the generated-part markers of docs/reference/http-api.md').toBeGreaterThanOrEqual(0);
  const expected = routeTables(doc);
  if (process.env.UPDATE_DOCS === '1') writeFileSync(PAGE, page.slice(0, start) + expected + page.slice(end + END.length));
  else expect(page.slice(start, end + END.length)).toBe(expected);
  expect(Object.keys(doc.paths).length).toBeGreaterThan(50);
});
