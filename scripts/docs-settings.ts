import { readFileSync, writeFileSync } from 'node:fs';
import { renderSettings, withSettings } from './settings/render.js';

/** `npm run docs:settings`: rewrites the tables of docs/reference/settings.md from the schemas. */
const page = new URL('../docs/reference/settings.md', import.meta.url);
writeFileSync(page, withSettings(readFileSync(page, 'utf8'), renderSettings()));
