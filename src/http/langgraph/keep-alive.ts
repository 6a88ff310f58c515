import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../../domain/errors.js';
import type { LangGraphError } from '../../langgraph-server/run-stops.js';
import type { RouteResult } from '../route.js';

/**
 * The keep-alive that holds a LangGraph wait or join open until its answer comes, as
 * LangGraph's server does.
 */

/** An error thrown while an answer was kept alive, in the body instead of a status (already sent). */
function errorBodyOf(error: unknown): { __error__: LangGraphError } {
  if (error instanceof AppError && error.expose) return { __error__: { error: error.code, message: error.message } };
  return { __error__: { error: 'internal', message: 'An internal error occurred.' } };
}

/**
 * Answers `answer` as JSON; when it takes longer than `intervalMs`, the 200 and its headers
 * go out at once and a newline follows every `intervalMs` until the JSON comes (LangGraph's
 * keep-alive, which JSON parsers skip as whitespace), so no proxy cuts a long wait. An error
 * after that point is the body's `__error__`; before it, the usual error answer.
 */
export async function keptAlive(ctx: Context, answer: Promise<unknown>, intervalMs: number, logger: Pick<Logger, 'error'>): Promise<RouteResult> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), intervalMs)));
  const first = await Promise.race([answer.then((value) => ({ value })), slow]).finally(() => clearTimeout(timer));
  if (first) return { status: 200, body: first.value };

  const body = new PassThrough();
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = body;
  body.write('\n');
  const beat = setInterval(() => body.write('\n'), intervalMs);
  void answer
    .then(
      (value) => JSON.stringify(value),
      (error: unknown) => {
        if (!(error instanceof AppError && error.expose)) logger.error({ err: error }, 'a kept-alive LangGraph answer failed');
        return JSON.stringify(errorBodyOf(error));
      },
    )
    .then((json) => {
      clearInterval(beat);
      body.end(json);
    });
  body.once('close', () => clearInterval(beat));
  return 'handled';
}
