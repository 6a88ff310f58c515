import { z } from 'zod';
import { AppError, badRequest } from '../../domain/errors.js';
import { roleAtLeast, type JsonObject, type Principal } from '../../domain/types.js';
import { protocolState, respondToInterrupts, startProtocolRun } from '../../langgraph-server/protocol.js';
import { MULTITASK_STRATEGIES } from '../../langgraph-server/types.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema } from '../schemas.js';
import { parsePart } from '../validate.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';
import { streamThreadEvents } from './protocol-stream.js';
import { RunCreateBody } from './schemas.js';

/**
 * The thread-centric routes of LangGraph's streaming protocol (v2) over HTTP, what
 * `@langchain/react`'s `useStream` (and the SDK's `client.threads.stream`) speak by default:
 * commands answered as JSON, and a thread's events as server-sent events. The commands a chat
 * needs are served (`run.start`, `input.respond`, `state.get`); the others are 400, named.
 * Names a client gives (channels, namespace segments, state keys) are at most
 * {@link MAX_NAME_LENGTH} characters.
 */

/** The longest channel name, namespace segment or state key a request may give. */
const MAX_NAME_LENGTH = 256;
const Name = z.string().max(MAX_NAME_LENGTH);

const ThreadParams = z.object({ thread_id: IdParam.meta({ description: 'thread id (the session id)' }) });

const CommandBody = z
  .object({
    id: z.number().int().min(0).meta({ description: "the client's id of the command, echoed in the answer" }),
    method: z.string().min(1).meta({ description: '`run.start`, `input.respond` or `state.get`' }),
    params: JsonObjectSchema.optional(),
  })
  .meta({ id: 'ProtocolCommand' });

const RunStartParams = z.looseObject({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  config: RunCreateBody.shape.config,
  metadata: JsonObjectSchema.optional(),
  multitaskStrategy: z.enum(MULTITASK_STRATEGIES).optional(),
});

const Namespace = z.array(Name);
const Answer = z.looseObject({ interrupt_id: z.string().min(1), response: z.unknown(), namespace: Namespace.optional() });
const RespondParams = z
  .looseObject({
    interrupt_id: z.string().min(1).optional(),
    response: z.unknown().optional(),
    namespace: Namespace.optional(),
    responses: z.array(Answer).min(1).max(100).optional(),
    update: RunCreateBody.shape.command.unwrap().shape.update,
    goto: RunCreateBody.shape.command.unwrap().shape.goto,
    config: RunCreateBody.shape.config,
    metadata: JsonObjectSchema.optional(),
  })
  .refine((params) => (params.interrupt_id === undefined) !== (params.responses === undefined), { error: 'give either interrupt_id (with response) or responses' });

const StateGetParams = z.looseObject({
  namespace: Namespace.max(0, { error: "only the root graph's state ([]): agentplane does not read a subgraph's state through the protocol" }).optional(),
  keys: z.array(Name).optional(),
});

const ProtocolSuccess = z
  .object({
    type: z.literal('success'),
    id: z.number().int(),
    result: JsonObjectSchema.meta({ description: '`run.start`: `{run_id}`; `input.respond`: `{}`; `state.get`: `{values, checkpoint}`' }),
    meta: z.object({ thread_id: z.string() }),
  })
  .meta({ id: 'ProtocolSuccess' });

const EventsBody = z
  .strictObject({
    channels: z.array(Name.min(1)).min(1).max(20).meta({ description: '`values`, `updates`, `messages`, `lifecycle`, `input`, `custom` (or `custom:<name>`); others match nothing' }),
    namespaces: z.array(Namespace).max(100).optional().meta({ description: 'namespace prefixes; none: every namespace' }),
    depth: z.number().int().min(0).optional().meta({ description: 'how far below a prefix an event may be' }),
    since: z.number().int().min(0).optional().meta({ description: 'only events with a greater seq' }),
  })
  .meta({ id: 'ProtocolEventStream' });

/** Methods of the protocol agentplane does not serve: a clear 400 rather than silence. */
const UNSERVED: Record<string, string> = {
  'subscription.subscribe': 'the WebSocket transport subscribes with commands; over HTTP each POST …/stream/events is a subscription',
  'subscription.unsubscribe': 'the WebSocket transport subscribes with commands; over HTTP close the event stream',
  'subscription.reconnect': 'the WebSocket transport reconnects with commands; over HTTP open the event stream again',
  'agent.getTree': 'agentplane does not track the agent tree of a run',
  'input.inject': 'agentplane does not inject messages into a running run',
  'state.listCheckpoints': 'read the checkpoints with POST /threads/{thread_id}/history',
  'state.fork': 'fork with run.start and config.configurable.checkpoint_id',
};

type Command = z.infer<typeof CommandBody>;

/** The commands that change the thread: where roles are enforced they need `user`; `state.get` only reads (`viewer`), as GET …/state. */
const WRITES: ReadonlySet<string> = new Set(['run.start', 'input.respond']);

function mayWrite(deps: AppDeps, principal: Principal, method: string): void {
  const { SERVICE_RBAC, SERVICE_AUTH } = deps.config;
  if (WRITES.has(method) && SERVICE_RBAC && SERVICE_AUTH !== 'none' && !roleAtLeast(principal.role, 'user')) {
    throw new AppError('forbidden', `${method} changes the thread, which needs the user role (a viewer may read it with state.get).`);
  }
}

/** What a command's params are, as the schema reads them: a 400 names the field (`body.params.assistant_id: …`). */
function paramsOf<T>(schema: z.ZodType<T>, command: Command): T {
  return parsePart('body', z.object({ params: schema }), { params: command.params ?? {} }).params;
}

async function answer(deps: AppDeps, principal: Principal, threadId: string, command: Command): Promise<JsonObject> {
  mayWrite(deps, principal, command.method);
  switch (command.method) {
    case 'run.start':
      return startProtocolRun(deps, principal, threadId, paramsOf(RunStartParams, command));
    case 'input.respond': {
      const params = paramsOf(RespondParams, command);
      const responses = params.responses ?? [{ interrupt_id: params.interrupt_id!, response: params.response }];
      await respondToInterrupts(deps, principal, threadId, { responses, update: params.update, goto: params.goto, config: params.config, metadata: params.metadata });
      return {};
    }
    case 'state.get':
      return protocolState(deps, principal.tenant, threadId, paramsOf(StateGetParams, command).keys);
    default: {
      const why = UNSERVED[command.method];
      throw badRequest(why ? `body.method: ${command.method} is not supported: ${why}.` : `body.method: unknown command "${command.method}" (agentplane serves run.start, input.respond and state.get).`);
    }
  }
}

/** POST /threads/{id}/commands and POST /threads/{id}/stream/events. */
export function langgraphProtocolRoutes(deps: AppDeps): AnyRoute[] {
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/commands',
      operationId: 'threadCommand',
      summary: "A command of LangGraph's streaming protocol on a thread: run.start (the thread is created when it does not exist), input.respond, state.get",
      // state.get is a read (viewer); run.start and input.respond need user, checked per command.
      readOnly: true,
      params: ThreadParams,
      body: CommandBody,
      bodyExamples: {
        start: { summary: 'start a run of the chat graph', value: { id: 1, method: 'run.start', params: { assistant_id: 'chat', input: { messages: [{ type: 'human', content: 'Paris' }] } } } },
      },
      responses: { 200: { description: 'The answer of the command', schema: ProtocolSuccess }, ...langgraphErrors(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      handler: async ({ params, body, principal }) => ({
        status: 200,
        body: { type: 'success', id: body.id, result: await answer(deps, principal, params.thread_id, body), meta: { thread_id: params.thread_id } },
      }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/stream/events',
      operationId: 'streamThreadEvents',
      summary: "A thread's events in LangGraph's streaming protocol: its current run from its start, then live, until the client leaves",
      readOnly: true,
      params: ThreadParams,
      body: EventsBody,
      bodyExamples: { chat: { summary: 'what useStream asks for', value: { channels: ['values', 'lifecycle', 'input', 'messages'], depth: 1 } } },
      responses: {
        200: {
          description: 'Server-sent events: `id` the event_id, `event` the method (`lifecycle`, `messages`, `values`, `updates`, `input.requested`, `custom`), data the event as JSON',
          contentType: 'text/event-stream',
        },
        ...langgraphErrors(400, 401, 403, 404, 413, 415, 429, 503),
      },
      handler: async ({ params, body, principal, ctx }) => streamThreadEvents(deps, principal, ctx, params.thread_id, body),
    }),
  ];
}
