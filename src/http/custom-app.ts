import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Context, Middleware } from 'koa';
import { AppError } from '../domain/errors.js';
import type { HonoContextLike, HttpApp } from '../ports/http-app.js';

/*
 * The `http.app` of langgraph.json (a Hono app) in front of the API, as LangGraph's server
 * mounts it: after CORS and authentication, before the API's routes. Its routes answer the
 * paths they declare (a path of the API too: theirs win); its middleware wraps every request,
 * the API's included: it may answer instead of the API, set headers on the API's answer, or
 * change the JSON body the API then reads (`await c.req.json()` and edit the object). A request
 * none of its routes takes goes on to the API, through the app's `notFound`, which is agentplane's.
 */

const PASS = Symbol.for('agentplane.http-app.pass');
const NOT_READ = Symbol('not read');
/** Names the empty answer the app's middleware sees for a request the API answers (with a token of this process). */
const PASSED = 'x-agentplane-passed-through';

interface PassEnv {
  incoming: IncomingMessage;
  [PASS]?: (c: HonoContextLike) => Promise<void>;
}

export interface CustomAppOptions {
  app: HttpApp;
  /** Whether the request is one of the API's public routes (answered without credentials). */
  isPublic: (ctx: Context) => boolean;
  /** Authenticates a request (the global rate limit first) and sets `ctx.state.principal`; throws 401/429. */
  guard: (ctx: Context) => Promise<void>;
  maxBodyBytes: number;
}

/** Koa middleware serving `options.app` in front of what follows it. */
export function customAppMiddleware(options: CustomAppOptions): Middleware {
  const token = randomUUID();
  options.app.notFound(async (c) => {
    const pass = (c.env as PassEnv | undefined)?.[PASS];
    if (!pass) return new Response('Not Found', { status: 404 });
    await pass(c);
    return new Response(null, { status: 200, headers: { [PASSED]: token } });
  });

  return async (ctx, next) => {
    if (!options.isPublic(ctx)) await options.guard(ctx);
    let failure: { error: unknown } | undefined;
    let passed = false;
    const env: PassEnv = {
      incoming: ctx.req,
      [PASS]: async (c) => {
        passed = true;
        try {
          const body = await bodyRead(c);
          if (body !== NOT_READ) (ctx.request as { body?: unknown }).body = body;
          await next();
        } catch (error) {
          failure = { error };
        }
      },
    };
    const response = await options.app.fetch(requestOf(ctx, options.maxBodyBytes), env);
    if (passed && (failure || response.headers.get(PASSED) === token)) {
      copyHeaders(response, ctx, true);
      if (failure) throw failure.error;
      return;
    }
    // The app's own answer.
    ctx.state.routePattern ??= 'http.app';
    ctx.status = response.status;
    copyHeaders(response, ctx, false);
    ctx.body = response.body ? Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>) : '';
  };
}

/** The JSON body the app's middleware read (and may have changed), or NOT_READ when it left the body to the API. */
async function bodyRead(c: HonoContextLike): Promise<unknown> {
  const cache = c.req.bodyCache ?? {};
  if (cache.json) return await cache.json;
  if (!Object.values(cache).some((read) => read !== undefined)) return NOT_READ;
  const text = await c.req.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('bad_request', 'The request body is not valid JSON.');
  }
}

function copyHeaders(response: Response, ctx: Context, passedThrough: boolean): void {
  response.headers.forEach((value, name) => {
    if (name === PASSED || name === 'set-cookie' || name === 'content-length') return;
    if (passedThrough && name === 'content-type') return;
    ctx.set(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) ctx.append('Set-Cookie', cookies);
}

/** The Koa request as a fetch Request; its body is read from the socket only if the app reads it. */
function requestOf(ctx: Context, maxBodyBytes: number): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = ctx.method !== 'GET' && ctx.method !== 'HEAD' && (Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '');
  // The path the API authenticated and routed (normal already: src/http/middleware/normal-path.ts),
  // not the request target, which may be absolute-form (`GET http://host/path`).
  const url = new URL(`${originOf(ctx)}${ctx.path}${ctx.search}`);
  return new Request(url, { method: ctx.method, headers, ...(hasBody ? { body: lazyBody(ctx.req, maxBodyBytes), duplex: 'half' } : {}) } as RequestInit);
}

/** The origin of the request's Host header; 400 for a Host that is not a host name and port (nothing else). */
function originOf(ctx: Context): string {
  // The header as sent: Koa's `ctx.host` drops a user part (`user@host`) and answers '' for what it cannot parse.
  const host = ctx.get('Host') || 'localhost';
  let origin: string | undefined;
  try {
    if (!/[/\\?#@]/.test(host)) origin = new URL(`${ctx.protocol}://${host}`).origin;
  } catch {
    origin = undefined;
  }
  if (!origin) throw new AppError('bad_request', `The Host header ${JSON.stringify(host)} is not a host name and port.`);
  return origin;
}

/** A stream over the request's body that reads nothing until it is read (the API's body parser reads it otherwise), bounded in bytes. */
function lazyBody(req: IncomingMessage, maxBytes: number): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= req[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        const { value, done } = await chunks.next();
        if (done) return controller.close();
        seen += value.length;
        if (seen > maxBytes) return controller.error(new AppError('payload_too_large', `The request body is larger than ${maxBytes} bytes.`));
        controller.enqueue(new Uint8Array(value));
      },
    },
    { highWaterMark: 0 },
  );
}
