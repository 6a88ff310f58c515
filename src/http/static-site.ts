import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { AppError } from '../domain/errors.js';

/** A page's files: name (no folder) → bytes. */
export type SiteFiles = ReadonlyMap<string, Buffer>;

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'application/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  png: 'image/png',
};

// Everything a page loads is its own: no inline script or style, no other origin, no frames.
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const HERE = import.meta.url;

/** Where a bundled page comes from: dist/ once built, its build script when running from source. */
export interface BuiltPageOptions {
  /** What the page is, for errors: `the console`. */
  name: string;
  /** The built files' folder under dist/: `console`, `examples/chat`. */
  distDir: string;
  /** The build script under scripts/ and the function it exports that bundles the page in memory. */
  script: string;
  build: string;
  /** The setting that turns the page off, named when it is not built. */
  setting: string;
}

/**
 * A bundled page's files. Compiled (`node dist/…`), they are dist/<distDir>, written by
 * `npm run build`, read once here; missing, this throws at construction. From source (tsx,
 * tests), the page's build script bundles it in memory on the first request, once per
 * process, so `npm start` serves the current sources with no build step.
 */
export function builtPage(options: BuiltPageOptions): () => Promise<SiteFiles> {
  if (!HERE.endsWith('.ts')) {
    const dir = fileURLToPath(new URL(`../../${options.distDir}/`, HERE));
    if (!existsSync(join(dir, 'index.html'))) {
      throw new Error(`${capitalized(options.name)} is not built (${dir} is missing): run npm run build, or set ${options.setting}=false.`);
    }
    const files = new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name))]));
    return async () => files;
  }
  let built: Promise<SiteFiles> | undefined;
  return () => {
    built ??= (async () => {
      // A computed specifier: the build scripts are plain JS beside the sources, absent from the image.
      const script = new URL(`../../scripts/${options.script}`, HERE).href;
      const bundle = ((await import(script)) as Record<string, () => Promise<SiteFiles>>)[options.build];
      if (!bundle) throw new Error(`scripts/${options.script} exports no ${options.build}().`);
      return bundle();
    })();
    return built;
  };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function asset(name: string, body: Buffer): Asset {
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  return { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export interface StaticSiteOptions {
  /** What the site is, for errors: `the console`. */
  name: string;
  /** The path it is served under, without the trailing slash: `/console`. */
  mount: string;
  files: () => Promise<SiteFiles>;
  /** Files added to the loaded ones (settings the page reads). */
  extra?: SiteFiles;
}

/**
 * Serves a single page's public static files under `mount`/ (`mount` redirects there): GET and
 * HEAD only, index.html for the folder, a strict Content-Security-Policy, and revalidation by
 * ETag, so a new build is picked up at once. Any other path goes on to `next`.
 */
export function staticSite(options: StaticSiteOptions): Middleware {
  const { mount } = options;
  const extra = [...(options.extra ?? [])].map(([name, body]) => [name, asset(name, body)] as const);
  let assets: Promise<Map<string, Asset>> | undefined;
  const load = () =>
    (assets ??= options.files().then((found) => new Map([...[...found].map(([name, body]) => [name, asset(name, body)] as const), ...extra])));

  return async (ctx, next) => {
    if (ctx.path !== mount && !ctx.path.startsWith(`${mount}/`)) return next();
    ctx.state.routePattern = mount;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, { headers: { Allow: 'GET, HEAD' } });
    }
    if (ctx.path === mount) {
      ctx.redirect(`${mount}/`);
      return;
    }
    const name = ctx.path.slice(mount.length + 1) || 'index.html';
    let file: Asset | undefined;
    try {
      file = (await load()).get(name);
    } catch (error) {
      assets = undefined;
      throw new AppError('internal', `${capitalized(options.name)} could not be built.`, { cause: error });
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
