import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Command, MemorySaver } from '@langchain/langgraph';
import { graph as echoGraph } from '../../examples/langgraph/echo.js';
import { graph as reviewGraph } from '../../examples/langgraph/human-review.js';

/**
 * LangGraph alone behind a bare `node:http` server: the floor any HTTP server pays for the same
 * graphs, measured by bench:langgraph as the served rows are (its own process, the client in the
 * benchmark's). No framework, no validation, no events: each request is read, parsed, invoked
 * on a `MemorySaver` and answered with the graph's values as JSON.
 *
 * - `POST /echo` `{message}`: the echo graph on a new thread.
 * - `POST /review` `{topic}`: the human-review graph on a new thread, to its `interrupt()`
 *   (`{thread_id, __interrupt__}`); `POST /review/resume` `{thread_id}`: resumed with
 *   `Command({resume: {approved: true}})` to its end.
 * - `GET /health/ready`: 200, as the benchmark's other processes answer once they listen.
 *
 * Listens on 127.0.0.1:`SERVICE_PORT`.
 */
const echo = echoGraph.withConfig({});
echo.checkpointer = new MemorySaver();
// The review graph is invoked with its own input (typed as the echo's).
const review = (reviewGraph as unknown as typeof echoGraph).withConfig({});
review.checkpointer = new MemorySaver();

async function answer(req: IncomingMessage): Promise<[number, unknown]> {
  if (req.method === 'GET' && req.url === '/health/ready') return [200, { status: 'ready' }];
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
  if (req.method !== 'POST') return [405, { error: 'POST only' }];
  if (req.url === '/echo') return [200, await echo.invoke({ message: String(body.message) }, { configurable: { thread_id: randomUUID() } })];
  if (req.url === '/review') {
    const threadId = randomUUID();
    return [200, { thread_id: threadId, ...(await review.invoke({ topic: body.topic } as never, { configurable: { thread_id: threadId } })) }];
  }
  if (req.url === '/review/resume') {
    return [200, await review.invoke(new Command({ resume: { approved: true } }) as never, { configurable: { thread_id: String(body.thread_id) } })];
  }
  return [404, { error: `no route ${req.url}` }];
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  answer(req).then(
    ([status, value]) => reply(res, status, value),
    (error: unknown) => reply(res, 500, { error: String(error) }),
  );
}

function reply(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer(serve);
// The benchmark's clients keep their sockets between batches.
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.SERVICE_PORT ?? 0), process.env.SERVICE_HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
