import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import { AppError } from '../domain/errors.js';

/** What the console needs to know about the server before it calls the API (public, no secret). */
export interface ConsoleSettings {
  auth: Config['SERVICE_AUTH'];
  api_key_header: string;
  approvals: boolean;
  schedules: boolean;
}

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

type Files = ReadonlyMap<string, Buffer>;

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'application/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  png: 'image/png',
};

// Everything the console loads is its own: no inline script or style, no other origin, no frames.
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const HERE = import.meta.url;

/**
 * The console's files. Compiled (`node dist/…`), they are dist/console, written by
 * `npm run build`, read once here; missing, this throws at construction. From source (tsx,
 * tests), scripts/build-console.mjs bundles console/ in memory on the first request, once per
 * process, so `npm start` serves the current sources with no build step.
 */
function consoleFiles(): () => Promise<Files> {
  if (!HERE.endsWith('.ts')) {
    const dir = fileURLToPath(new URL('../../console/', HERE));
    if (!existsSync(join(dir, 'index.html'))) {
      throw new Error(`The console is not built (${dir} is missing): run npm run build, or set SERVICE_CONSOLE=false.`);
    }
    const files = new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name))]));
    return async () => files;
  }
  let built: Promise<Files> | undefined;
  return () => {
    built ??= (async () => {
      // A computed specifier: the build script is plain JS beside the sources, absent from the image.
      const script = new URL('../../scripts/build-console.mjs', HERE).href;
      const { buildConsole } = (await import(script)) as { buildConsole: () => Promise<Files> };
      return buildConsole();
    })();
    return built;
  };
}

function asset(name: string, body: Buffer): Asset {
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  return { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Serves the single-page console at /console/ (/console redirects there): public static files
 * (index.html, app.js, app.css) and config.json, the {@link ConsoleSettings} the page reads
 * first. All data then comes from the API with the credential the user types in. Responses
 * revalidate by ETag, so a new build is picked up at once.
 */
export function webConsole(settings: ConsoleSettings): Middleware {
  const files = consoleFiles();
  const config = asset('config.json', Buffer.from(JSON.stringify(settings)));
  let assets: Promise<Map<string, Asset>> | undefined;
  const load = () =>
    (assets ??= files().then((found) => {
      const map = new Map([...found].map(([name, body]) => [name, asset(name, body)]));
      map.set('config.json', config);
      return map;
    }));

  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
    ctx.state.routePattern = '/console';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, { headers: { Allow: 'GET, HEAD' } });
    }
    if (ctx.path === '/console') {
      ctx.redirect('/console/');
      return;
    }
    const name = ctx.path.slice('/console/'.length) || 'index.html';
    let file: Asset | undefined;
    try {
      file = (await load()).get(name);
    } catch (error) {
      assets = undefined;
      throw new AppError('internal', 'The console could not be built.', { cause: error });
    }
    if (!file) return next();
    ctx.set(HEADERS);
    ctx.set('Cache-Control', 'no-cache');
    ctx.etag = file.etag;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = file.type;
    ctx.body = file.body;
  };
}
