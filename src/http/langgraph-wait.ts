import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';
import { TIMEOUT_ERROR, type JsonObject, type Run } from '../domain/types.js';
import type { AppDeps } from './deps.js';
import type { RouteResult } from './route.js';
import type { WaitedRun } from './run-wait.js';

/**
 * What a LangGraph wait or join answers once its run stopped: the thread's values, with
 * `__interrupt__` (the pending interrupts) when it paused, or `__error__` when it failed, as
 * LangGraph's server answers them; and the keep-alive that holds such an answer open.
 */

/** LangGraph's error shape (`{error, message}`), in `__error__` of a wait and in a stream's `error` event. */
export interface LangGraphError {
  error: string;
  message: string;
}

/** Why the run ended badly, as LangGraph names it: failed, or cancelled at its deadline; undefined otherwise. */
export function errorOf(run: Pick<Run, 'status' | 'error'>): LangGraphError | undefined {
  if (run.status === 'failed') return { error: 'Error', message: run.error ?? 'The run failed.' };
  if (run.status === 'cancelled' && run.error === TIMEOUT_ERROR) return { error: 'TimeoutError', message: 'The run was cancelled at its deadline.' };
  return undefined;
}

/** An error thrown while an answer was kept alive, in the body instead of a status (already sent). */
function errorBodyOf(error: unknown): { __error__: LangGraphError } {
  if (error instanceof AppError && error.expose) return { __error__: { error: error.code, message: error.message } };
  return { __error__: { error: 'internal', message: 'An internal error occurred.' } };
}

/**
 * The answer of a wait or join for a run as it stands (`waitedRun`'s): its state (a graph's
 * values), plus `__interrupt__` when paused (a graph's interrupts `{value, id}` from its
 * thread state; a native agent's request as `{value: payload or prompt, id: approval id}`), or
 * `{__error__}` when it failed or timed out.
 */
export async function valuesOf(deps: AppDeps, tenant: string, run: WaitedRun): Promise<JsonObject> {
  const failure = errorOf(run);
  if (failure) return { __error__: failure };
  const values = run.state ?? {};
  if (run.status !== 'interrupted') return values;
  return { ...values, __interrupt__: await interruptsOf(deps, tenant, run) };
}

async function interruptsOf(deps: AppDeps, tenant: string, run: WaitedRun): Promise<unknown[]> {
  if (deps.agents.get(run.agent_id)?.graph && deps.graphs) {
    const state = await deps.graphs.threadState(tenant, run.session_id, run.agent_id);
    const tasks = (state?.tasks ?? []) as { interrupts?: unknown[] }[];
    return tasks.flatMap((task) => task.interrupts ?? []);
  }
  const approval = run.approval;
  return approval ? [{ value: approval.payload ?? approval.prompt, id: approval.id }] : [];
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
