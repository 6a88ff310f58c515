import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import { builtPage, staticSite } from './static-site.js';

/** What the console needs to know about the server before it calls the API (public, no secret). */
export interface ConsoleSettings {
  auth: Config['SERVICE_AUTH'];
  api_key_header: string;
  approvals: boolean;
  schedules: boolean;
}

/**
 * Serves the single-page console at /console/ (/console redirects there): public static files
 * (index.html, app.js, app.css; dist/console once built, scripts/build-console.mjs from source)
 * and config.json, the {@link ConsoleSettings} the page reads first. All data then comes from
 * the API with the credential the user types in.
 */
export function webConsole(settings: ConsoleSettings): Middleware {
  return staticSite({
    name: 'the console',
    mount: '/console',
    files: builtPage({ name: 'the console', distDir: 'console', script: 'build-console.mjs', build: 'buildConsole', setting: 'SERVICE_CONSOLE' }),
    extra: new Map([['config.json', Buffer.from(JSON.stringify(settings))]]),
  });
}
