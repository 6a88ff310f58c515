import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Middleware } from 'koa';
import { AppError } from '../domain/errors.js';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>agentplane API</title>
  <link rel="stylesheet" href="./swagger-ui.css">
  <link rel="icon" type="image/png" href="./favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="./swagger-ui-bundle.js"></script>
  <script src="./swagger-ui-standalone-preset.js"></script>
  <script src="./swagger-initializer.js"></script>
</body>
</html>
`;

const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: './doc.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    // The online validator's badge would load an image from validator.swagger.io, which the CSP refuses.
    validatorUrl: null,
  });
};
`;

/**
 * The one inline style Swagger UI renders: the `<style>` inside the logo's SVG of the top bar
 * (swagger-ui-standalone-preset.js). Allowed by its hash, not by 'unsafe-inline'; a new
 * swagger-ui-dist that changes it shows as a CSP violation in the browser test.
 */
const LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';

/**
 * The tightest policy Swagger UI works with (its browser test records every CSP violation):
 * its scripts are files of its own, the initializer included (no inline script, no eval); its
 * React components set styles through the DOM, which `style-src` does not govern; its icons
 * are data: URLs. Nothing from another origin, and no site may frame it (clickjacking on "Execute").
 */
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; " +
    `style-src 'self' 'sha256-${createHash('sha256').update(LOGO_STYLE).digest('base64')}'; ` +
    "connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/**
 * Serves the Swagger console from swagger-ui-dist at /swagger/ and the OpenAPI document at
 * /swagger/doc.json; /swagger redirects to /swagger/. Assets are read once, at construction.
 */
export function swaggerConsole(document: () => unknown): Middleware {
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = new Map<string, { type: string; body: Buffer | string }>([
    ['', { type: 'text/html; charset=utf-8', body: INDEX_HTML }],
    ['index.html', { type: 'text/html; charset=utf-8', body: INDEX_HTML }],
    ['swagger-initializer.js', { type: 'application/javascript; charset=utf-8', body: INITIALIZER }],
  ]);
  for (const [name, type] of Object.entries(ASSETS)) files.set(name, { type, body: readFileSync(join(root, name)) });

  return async (ctx, next) => {
    if (ctx.path !== '/swagger' && !ctx.path.startsWith('/swagger/')) return next();
    ctx.state.routePattern = '/swagger';
    ctx.set(HEADERS);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
        headers: { Allow: 'GET, HEAD' },
      });
    }
    if (ctx.path === '/swagger') {
      ctx.redirect('/swagger/');
      return;
    }
    const name = ctx.path.slice('/swagger/'.length);
    if (name === 'doc.json') {
      ctx.body = document();
      return;
    }
    const file = files.get(name);
    if (!file) return next();
    ctx.type = file.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = file.body;
  };
}
