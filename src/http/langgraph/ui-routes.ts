import { extname } from 'node:path';
import { z } from 'zod';
import { AppError } from '../../domain/errors.js';
import type { UiBundles } from '../../ports/ui-bundles.js';
import type { AnyRoute } from '../route.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
};

/**
 * What the HTML and the files say to a browser that opens them as a page (a navigation, a form
 * post): their type as sent, nothing run. The SDK fetches the HTML and a page's `<script src>`
 * runs the files (of the type it says): neither is hindered by these.
 */
const HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox" };

/** `text` for an HTML attribute value in double quotes. */
const attribute = (text: string): string => text.replace(/[&"'<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `value` as a JavaScript string literal with none of `'`, `&`, `<`, `>` (escaped as `\u00XX`, the
 * same string to the script), so that it stays inside a single-quoted attribute as LangGraph's
 * server writes it, whatever the client sent.
 */
const scriptString = (value: string): string => JSON.stringify(value).replace(/['&<>]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const NameParams = z.object({ name: z.string().meta({ description: 'a component bundle of langgraph.json `ui`' }) });

/**
 * Generative UI as LangGraph's server serves it (`client["~ui"].getComponent`, `LoadExternalComponent`
 * of `@langchain/langgraph-sdk/react-ui`): `POST /ui/{name}` answers the HTML that loads a
 * component of the bundle `name` (its stylesheets and its script, which renders it into the
 * shadow root the client names), `GET /ui/{name}/{file}` serves the bundle's files. The files are
 * public (a browser's `<script src>` carries no credential): they are the project's component
 * code, nothing of a tenant.
 */
export function langgraphUiRoutes(bundles: UiBundles | undefined): AnyRoute[] {
  const filesOf = (name: string) => {
    const files = bundles?.files(name);
    if (!files?.length) throw new AppError('not_found', `No generative UI is named "${name}" (langgraph.json "ui").`);
    return files;
  };
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/ui/:name',
      operationId: 'getUiComponent',
      summary: 'The HTML that loads a generative UI component of a `ui` bundle',
      readOnly: true,
      params: NameParams,
      bodyExamples: { component: { summary: 'the HTML that loads the component "weather"', value: { name: 'weather' } } },
      body: z.object({ name: z.string().min(1).meta({ description: 'the component, a key of the bundle’s default export' }), props: z.unknown().optional() }).loose(),
      responses: { 200: { description: 'A stylesheet link per CSS file and the script that renders the component', contentType: 'text/html' }, ...langgraphErrors(400, 401, 403, 404, 413, 415, 429) },
      handler: async ({ params, body, ctx }) => {
        const files = filesOf(params.name);
        const host = ctx.get('Host');
        // As LangGraph's server: plain http on localhost, else the page's own scheme.
        const local = /^(localhost|127\.0\.0\.1)(:\d+)?$/.test(host);
        const base = `${local ? 'http:' : ''}//${host}/ui/${params.name}`;
        const lines = files.filter((file) => extname(file.basename) === '.css').map((file) => `<link rel="stylesheet" href="${attribute(`${base}/${file.basename}`)}" />`);
        const script = files.find((file) => extname(file.basename) === '.js');
        if (script) {
          const global = `__LGUI_${params.name.replace(/[^a-zA-Z0-9]/g, '_')}`;
          lines.push(`<script src="${attribute(`${base}/${script.basename}`)}" onload='${global}.render(${scriptString(body.name)}, "{{shadowRootId}}")'></script>`);
        }
        return { status: 200, body: lines.join('\n'), headers: { 'Content-Type': 'text/html; charset=utf-8', ...HEADERS } };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/ui/:name/:file',
      operationId: 'getUiFile',
      summary: 'A file of a generative UI bundle (public)',
      public: true,
      params: NameParams.extend({ file: z.string() }),
      responses: { 200: { description: 'The file', contentType: 'application/javascript' }, ...langgraphErrors(400, 404) },
      handler: async ({ params }) => {
        const file = filesOf(params.name).find((candidate) => candidate.basename === params.file);
        if (!file) throw new AppError('not_found', `The generative UI "${params.name}" has no file "${params.file}".`);
        return { status: 200, body: Buffer.from(file.contents), headers: { 'Content-Type': TYPES[extname(file.basename)] ?? 'application/octet-stream', ...HEADERS } };
      },
    }),
  ];
}
