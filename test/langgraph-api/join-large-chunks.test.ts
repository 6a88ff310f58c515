import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { Client } from '@langchain/langgraph-sdk';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/**
 * Joining a run's stream from its start (Last-Event-ID -1) replays its retained chunks at the
 * client's pace: ten chunks of ~200 KB (2 MB, more than a stream may buffer, 1 MiB) all
 * arrive, in order, instead of the replay filling the buffer and the stream being cut.
 */
const CHUNKS = 10;
const big = new StateGraph(Annotation.Root({ done: Annotation<boolean> }))
  .addNode('emit', (_state, config: LangGraphRunnableConfig) => {
    for (let i = 0; i < CHUNKS; i += 1) config.writer?.({ i, blob: 'x'.repeat(200_000) });
    return { done: true };
  })
  .addEdge(START, 'emit')
  .addEdge('emit', END)
  .compile();

describe.each(['memory', 'redis'] as const)('joinStream over large retained chunks on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  let client: Client;

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), agents: new AgentRegistry([...builtInAgents, graphAgent('lg-big', big, ['emit'])]) });
    app.composition.startExecuting();
    client = new Client({ apiUrl: app.url, apiKey: null });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('replays every chunk from the start, in order, none cut', async () => {
    const thread = randomUUID();
    const run = await client.runs.create(thread, 'lg-big', { input: {}, streamMode: ['custom'], ifNotExists: 'create' });
    await client.runs.join(thread, run.run_id);
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.joinStream(thread, run.run_id, { lastEventId: '-1' })) parts.push(part as { event: string; data: unknown });
    const custom = parts.filter((p) => p.event === 'custom').map((p) => (p.data as { i: number }).i);
    expect(custom).toEqual(Array.from({ length: CHUNKS }, (_, i) => i));
  });
});
