import type { Middleware } from 'koa';
import { AppError } from '../../domain/errors.js';

/**
 * Paths that are their own normal form without asking the URL parser: `/` then segments of
 * characters the standard keeps as they are (no `.`, `%` or a backslash, nothing it escapes),
 * no empty segment but a trailing `/`. Nearly every request's path; the rest go through
 * {@link normalForm}. Each segment but the last ends at its `/`, so a path is matched one way
 * only (`(?:[…]+\/?)*` tried every split of a run of plain characters before failing on the
 * character after it: 2^n steps).
 */
const PLAIN_PATH = /^\/(?:[A-Za-z0-9_~!$&'()*+,;=:@-]+\/)*[A-Za-z0-9_~!$&'()*+,;=:@-]*$/;

/** Whether `path` is in the normal form of the WHATWG URL standard (see {@link normalForm}). */
export function isNormalPath(path: string): boolean {
  return PLAIN_PATH.test(path) || normalForm(path) === path;
}

/** `path` as the WHATWG URL standard writes it: `\` is `/`, `.` and `..` segments (`%2e` too) resolved, some characters escaped. */
function normalForm(path: string): string | undefined {
  if (!path.startsWith('/')) return undefined;
  try {
    return new URL(`http://localhost${path}`).pathname;
  } catch {
    return undefined;
  }
}

/** The options of {@link normalPath}. */
export interface NormalPathOptions {
  /** Whether a refused path, in its normal form, is one of the routes whose errors carry `detail`. */
  errorDetail?: (normalPath: string) => boolean;
}

/**
 * Refuses (400 `bad_request`) a request whose path is not in its normal form, before anything
 * reads the path. Koa's router, the consoles and the public-route check match the path as sent,
 * while an `http.app` (Hono) and anything else reading a WHATWG URL see it normalised: a path
 * that differs between the two, `/ui/a/..\..\custom\secret`, would be public to the one and an
 * app route to the other. Refusing those leaves one path for every decision.
 */
export function normalPath(options: NormalPathOptions = {}): Middleware {
  return async (ctx, next) => {
    const { path } = ctx;
    if (!isNormalPath(path)) {
      const normal = normalForm(path);
      // The error body of the face the path belongs to (LangGraph clients read `detail`).
      if (normal !== undefined && options.errorDetail?.(normal)) ctx.state.errorDetail = true;
      throw new AppError(
        'bad_request',
        `The path ${JSON.stringify(path)} is not in its normal form: no "\\", no "." or ".." segments (plain or percent-encoded), and characters a URL escapes escaped.`,
      );
    }
    await next();
  };
}
