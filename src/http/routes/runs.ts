import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import { nowIso } from '../../domain/time.js';
import { RUN_STATUSES, type RunStatus } from '../../domain/types.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses, IdParam, JsonObjectSchema, RunTicketSchema, Timestamp } from '../schemas.js';
import { pageQuery } from '../validate.js';
import { STOP_EVENTS } from '../../runtime/run-follower.js';
import { nodeNamesOf } from '../../runtime/agent.js';
import { beginFollowing, DEFAULT_WAIT_MS, holdForRun, WaitMs, waitedRun } from '../run-wait.js';
import type { SseStream } from '../sse.js';
import { RunEventSchema } from './events.js';
import { answerOf, keyed, REPLAYED_HEADER, StartHeaders, stoppedBefore } from './run-starts.js';

export const RunSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    agent_id: z.string(),
    status: z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]),
    created_at: Timestamp,
    updated_at: Timestamp,
    error: z.string().optional().meta({ description: 'why it failed or was cancelled (`timeout` when its deadline passed)' }),
    approval_id: z.string().optional().meta({ description: 'the latest approval request that paused this run' }),
    deadline_at: Timestamp.optional().meta({ description: 'when the run is cancelled with `error: "timeout"` if still active (`timeout_ms`)' }),
    seq_num: z.number().int().optional().meta({ description: 'the seq_num of the session checkpoint the run stopped at (once paused or ended)' }),
    queue: z
      .object({ tenant_queued: z.number().int(), tenant_running: z.number().int(), workers: z.number().int() })
      .optional()
      .meta({ description: 'a queued run (GET only): its tenant’s runs waiting for a worker slot, and running, and the workers alive (0: it waits for one to start)' }),
  })
  .meta({ id: 'Run' });


/** The body of POST /api/runs (and, with `wait_ms`, of its waiting and streaming forms). */
const StartRunBody = z.strictObject({
  agent_id: z.string().min(1),
  input: JsonObjectSchema.optional(),
  session_id: IdParam.optional().meta({ description: 'run on this session (created when absent)' }),
  multitask: z
    .enum(['reject', 'enqueue', 'interrupt'])
    .optional()
    .meta({
      description:
        'when the session already has a queued, running or interrupted run: `reject` (default, 409), ' +
        '`enqueue` (run after it, in order; at most 50 wait), `interrupt` (cancel it and the runs queued behind it, then start)',
    }),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400_000)
    .optional()
    .meta({ description: 'cancel the run with `error: "timeout"` if still active this long after it is created (default RUN_TIMEOUT_MS)' }),
});

/** What the console's "Try it out" sends: a run of the built-in `echo` agent on a new session. */
const START_RUN_EXAMPLES = {
  echo: { summary: 'echo on a new session', value: { agent_id: 'echo', input: { text: 'hello' } } },
  'human-review': {
    summary: 'human-review on session review-1 (replacing its active run): pauses for an approval',
    value: { agent_id: 'human-review', input: { topic: 'release notes' }, session_id: 'review-1', multitask: 'interrupt' as const },
  },
  'stream-words': {
    summary: 'stream-words with a deadline',
    value: { agent_id: 'stream-words', input: { text: 'one two three' }, timeout_ms: 60_000 },
  },
};

export const WaitedRunSchema = RunSchema.extend({
  state: JsonObjectSchema.optional().meta({ description: 'the latest checkpoint state, once the run stopped' }),
  approval: z
    .object({
      id: z.string(),
      prompt: z.string(),
      node_id: z.string(),
      requested_at: Timestamp,
      payload: z.unknown().optional().meta({ description: 'the JSON the request carries, when it carries one' }),
    })
    .optional()
    .meta({ description: 'the request the run waits for, when interrupted' }),
}).meta({ id: 'WaitedRun' });

const AgentSchema = z
  .object({ id: z.string(), description: z.string(), nodes: z.array(z.string()), entry: z.string() })
  .meta({ id: 'Agent' });

/** Agents, starting runs and reading runs (the README's *Runs and approvals*). */
export function runRoutes(deps: AppDeps): AnyRoute[] {
  const { store, runs, agents } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/agents',
      operationId: 'listAgents',
      summary: 'Registered agents',
      tag: 'runs',
      responses: {
        200: { description: 'The agents', schema: z.object({ agents: z.array(AgentSchema) }) },
        ...errorResponses(401, 403, 429),
      },
      handler: async () => ({
        status: 200,
        body: {
          agents: agents.list().map((a) => ({ id: a.id, description: a.description, nodes: nodeNamesOf(a), entry: a.entry })),
        },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/runs',
      operationId: 'startRun',
      summary: 'Start a run of an agent, on a new or an existing session',
      tag: 'runs',
      body: StartRunBody,
      headers: StartHeaders,
      bodyExamples: START_RUN_EXAMPLES,
      responses: {
        202: { description: 'The run is queued', schema: RunTicketSchema, headers: { Location: 'URL of the run', ...REPLAYED_HEADER } },
        ...errorResponses(400, 'unknown_agent', 401, 403, 409, 413, 415, 'idempotency_key_reused', 429, 503),
      },
      handler: async ({ body, principal, headers }) => {
        const ticket = await runs.startRun(principal.tenant, body, keyed(principal, headers, body));
        return { status: 202, ...answerOf(ticket) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/runs/wait',
      operationId: 'startRunAndWait',
      summary: 'Start a run and answer when it completes, fails, is cancelled or waits for an approval',
      tag: 'runs',
      body: StartRunBody.extend({ wait_ms: WaitMs.optional() }),
      headers: StartHeaders,
      bodyExamples: {
        echo: { summary: 'echo, answered once it completes', value: { agent_id: 'echo', input: { text: 'hello' }, wait_ms: 10_000 } },
        'human-review': {
          summary: 'human-review, answered when it waits for the approval',
          value: { agent_id: 'human-review', input: { topic: 'launch' }, wait_ms: 30_000 },
        },
      },
      responses: {
        200: {
          description: 'The run stopped: the run, its state and, when interrupted, its approval',
          schema: WaitedRunSchema,
          headers: { Location: 'URL of the run', ...REPLAYED_HEADER },
        },
        202: {
          description: '`wait_ms` passed first (or the replica is shutting down): the run as it stands',
          schema: RunSchema,
          headers: { Location: 'URL of the run', ...REPLAYED_HEADER },
        },
        // 410: the run vanished with its session while the request waited (answered at once, not after wait_ms).
        ...errorResponses(400, 'unknown_agent', 401, 403, 409, 410, 413, 415, 'idempotency_key_reused', 429, 503),
      },
      handler: async ({ body, principal, ctx, headers }) => {
        const { wait_ms: waitMs = DEFAULT_WAIT_MS, ...request } = body;
        const held = await holdForRun(deps, ctx, principal);
        try {
          const ticket = await runs.startRun(principal.tenant, request, { waited: true, ...keyed(principal, headers, request) });
          held.follow(ticket.run_id);
          const stop = stoppedBefore(ticket) ? 'stopped' : await held.until(waitMs);
          const run = await waitedRun(deps, principal.tenant, ticket, stop);
          return { status: stop ? 200 : 202, body: run, headers: answerOf(ticket).headers };
        } finally {
          held.done();
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/runs/stream',
      operationId: 'startRunAndStream',
      summary: 'Start a run and stream its events (server-sent events) until it ends or waits for an approval',
      tag: 'runs',
      body: StartRunBody,
      headers: StartHeaders,
      bodyExamples: {
        'stream-words': { summary: 'stream-words: one custom event per word', value: { agent_id: 'stream-words', input: { text: 'one two three' } } },
        echo: START_RUN_EXAMPLES.echo,
      },
      responses: {
        200: {
          description:
            'The run\'s events, frames and ids as /api/events/stream, up to the one that ends or pauses it; then the response ends. ' +
            'Resume with Last-Event-ID on /api/events/stream. If the run vanishes with its session, the last frame is a `failed` ' +
            'event with `error: "gone"` and no `id:` line (it is on no stream).',
          contentType: 'text/event-stream',
          schema: RunEventSchema,
          headers: { 'X-Run-Id': 'the run', 'X-Session-Id': 'its session', 'Cache-Control': 'no-cache', ...REPLAYED_HEADER },
        },
        ...errorResponses(400, 'unknown_agent', 401, 403, 409, 413, 415, 'idempotency_key_reused', 429, 503),
      },
      handler: async ({ body, principal, ctx, headers }) => {
        // The stream starts before the run is followed: the follower holds the run's events until then.
        let stream: SseStream | undefined;
        let ticket: { run_id: string; session_id: string } | undefined;
        let ended = false;
        const { follower, done } = await beginFollowing(deps, principal, deps.streams.admit(principal, ctx.ip), {
          onEvent: (event) => {
            if (ended) return;
            stream!.send(event);
            if (!STOP_EVENTS.has(event.event.type)) return;
            ended = true;
            stream!.end();
          },
          // No event will ever end a run removed with its session: say so, and end the stream.
          onGone: () => {
            if (ended) return;
            ended = true;
            stream!.sendWithoutId({ type: 'failed', session: ticket!.session_id, run_id: ticket!.run_id, agent_id: body.agent_id, ts: nowIso(), error: 'gone' });
            stream!.end();
          },
        });
        try {
          const started = await runs.startRun(principal.tenant, body, keyed(principal, headers, body));
          ticket = started;
          ctx.set({ 'X-Run-Id': started.run_id, 'X-Session-Id': started.session_id, ...(started.replayed ? { 'Idempotent-Replayed': 'true' } : {}) });
          stream = deps.streams.start(ctx);
          stream.onClose(done);
          // A replayed run that already stopped has no events to come: the stream ends (GET the run by X-Run-Id).
          if (stoppedBefore(started)) {
            ended = true;
            stream.end();
            return 'handled';
          }
          follower.follow(ticket.run_id);
          return 'handled';
        } catch (error) {
          if (!stream) done();
          throw error;
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/runs',
      operationId: 'listRuns',
      summary: "The tenant's runs (or a session's), newest first, filtered by status and agent, a page at a time",
      tag: 'runs',
      query: z.object({
        session_id: IdParam.optional().meta({ description: 'only the runs of this session (404 when it does not exist)' }),
        status: z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]).optional().meta({ description: 'only the runs with this status' }),
        agent_id: z.string().min(1).optional().meta({ description: 'only the runs of this agent' }),
        ...pageQuery(50, 500),
      }),
      responses: {
        200: { description: 'A page of the runs, newest `created_at` first', schema: z.object({ runs: z.array(RunSchema) }) },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        if (query.session_id !== undefined && !(await store.sessions.getSession(principal.tenant, query.session_id))) throw notFound('The session');
        return { status: 200, body: { runs: await store.runs.findRuns(principal.tenant, query) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/runs/:id/cancel',
      operationId: 'cancelRun',
      // A queued or interrupted run is cancelled at once (an interrupted run's approval is closed);
      // a running one too, and its node sees `ctx.signal` fire. 409 when the run already ended.
      summary: 'Cancel a queued, running or interrupted run (409 when it already ended)',
      tag: 'runs',
      params: z.object({ id: IdParam }),
      responses: { 200: { description: 'The cancelled run', schema: RunSchema }, ...errorResponses(400, 401, 403, 404, 409, 429) },
      handler: async ({ params, principal }) => ({ status: 200, body: await runs.cancelRun(principal.tenant, params.id, principal.subject) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/runs/:id',
      operationId: 'getRun',
      summary: 'One run',
      tag: 'runs',
      params: z.object({ id: IdParam }),
      responses: { 200: { description: 'The run', schema: RunSchema }, ...errorResponses(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => {
        const run = await store.runs.getRun(principal.tenant, params.id);
        if (!run) throw notFound('The run');
        if (run.status !== 'queued') return { status: 200, body: run };
        const depth = await runs.queueDepth(principal.tenant);
        return { status: 200, body: { ...run, queue: { tenant_queued: depth.queued, tenant_running: depth.running, workers: depth.workers } } };
      },
    }),
  ];
}
