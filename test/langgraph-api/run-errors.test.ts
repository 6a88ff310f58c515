import { randomUUID } from 'node:crypto';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, collect } from './runs-support.js';

/*
 * A failed graph run keeps the class of what the graph threw, as LangGraph's server shows it:
 * `{error: "CustomError", message: "Boo!"}` in the `error` event of a stream and a join, in the
 * `__error__` of a wait (the SDK throws "CustomError: Boo!"), `GraphRecursionError` past the
 * recursion limit; the run's stored error reads `CustomError: Boo!`. A plain Error is `Error`.
 */

class CustomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustomError';
  }
}

const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

const custom = new StateGraph(State)
  .addNode('boo', () => {
    throw new CustomError('Boo!');
  })
  .addEdge(START, 'boo')
  .addEdge('boo', END)
  .compile();

const plain = new StateGraph(State)
  .addNode('boom', () => {
    throw new Error('boom');
  })
  .addEdge(START, 'boom')
  .addEdge('boom', END)
  .compile();

/** Loops for ever: only the recursion limit ends it. */
const looping = new StateGraph(State)
  .addNode('again', () => ({ n: 1 }))
  .addEdge(START, 'again')
  .addConditionalEdges('again', () => 'again', ['again'])
  .compile();

describe.each(BACKENDS)('a failed graph run keeps its error class (%s)', (backend) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  let client: Client;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    const agents = new AgentRegistry([...builtInAgents, graphAgent('err-custom', custom, ['boo']), graphAgent('err-plain', plain, ['boom']), graphAgent('err-loop', looping, ['again'])]);
    api = await startTestApi({ agents, ...(redis ? { redisUrl: redis.url } : {}) });
    api.composition.startExecuting();
    client = new Client({ apiUrl: api.url, apiKey: null });
  });
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  const storedRun = (runId: string) =>
    waitFor(`run ${runId} failed`, async () => {
      const res = await fetch(`${api.url}/api/runs/${runId}`);
      const body = (await res.json()) as { status: string; error?: string };
      return body.status === 'failed' && body;
    });

  it("a stream's error event, a join's, the stored run: CustomError", async () => {
    const thread = randomUUID();
    const parts = await collect(client.runs.stream(thread, 'err-custom', { input: {}, ifNotExists: 'create' }));
    expect(parts.at(-1)).toMatchObject({ event: 'error', data: { error: 'CustomError', message: 'Boo!' } });
    const runId = (parts[0]!.data as { run_id: string }).run_id;
    expect(await storedRun(runId)).toMatchObject({ status: 'failed', error: 'CustomError: Boo!' });
    expect((await client.runs.get(thread, runId)).status).toBe('error');

    const joined = await collect(client.runs.joinStream(thread, runId, { lastEventId: '-1' }));
    expect(joined.at(-1)).toMatchObject({ event: 'error', data: { error: 'CustomError', message: 'Boo!' } });
  });

  it("a wait's __error__ (the SDK throws with the class), and join", async () => {
    const thread = randomUUID();
    await expect(client.runs.wait(thread, 'err-custom', { input: {}, ifNotExists: 'create' })).rejects.toThrow('CustomError: Boo!');
    const answered = await client.runs.wait(thread, 'err-custom', { input: {}, raiseError: false });
    expect(answered).toEqual({ __error__: { error: 'CustomError', message: 'Boo!' } });
  });

  it('past the recursion limit: GraphRecursionError, with our explanation of the limit', async () => {
    const thread = randomUUID();
    const error = await client.runs.wait(thread, 'err-loop', { input: {}, ifNotExists: 'create', config: { recursion_limit: 3 } }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^GraphRecursionError: The graph exceeded its step limit \(recursionLimit 3\): /);
    expect((await client.threads.get(thread)).status).toBe('error');
  });

  it('a plain Error stays Error, its stored error the message alone', async () => {
    const thread = randomUUID();
    const parts = await collect(client.runs.stream(thread, 'err-plain', { input: {}, ifNotExists: 'create' }));
    expect(parts.at(-1)).toMatchObject({ event: 'error', data: { error: 'Error', message: 'boom' } });
    expect(await storedRun((parts[0]!.data as { run_id: string }).run_id)).toMatchObject({ error: 'boom' });
  });
});
