import { randomUUID } from 'node:crypto';
import { Client as Sdk2Client } from '@langchain/langgraph-sdk-2';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { BACKENDS, collect, gates, useLangGraphApi } from './runs-support.js';

/*
 * What a LangGraph stream opens with, byte for byte: a real event first (`metadata`), never a
 * lone `retry:` frame, which LangGraph's SDK 2.0 decodes into an empty part `{event: "", data:
 * null}` of its own; and kept alive with comment lines that no blank line follows (after one
 * with an event id, the SDK's decoder makes an empty part of that too). The SDK of this
 * project (1.x) must see the same parts as before.
 */

/** The body of a streaming POST as text, read to its end. */
async function streamText(url: string, body: unknown): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return res.text();
}

/** The frames of an SSE text, each as its lines (comments dropped). */
const framesOf = (text: string): string[][] =>
  text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0);

describe.each(BACKENDS)('LangGraph streams start with a real event, no lone retry frame (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('POST /threads/{id}/runs/stream: the first frame is metadata, and no frame lacks an event name', async () => {
    const thread = randomUUID();
    const text = await streamText(`${api.app.url}/threads/${thread}/runs/stream`, { assistant_id: 'lg-two', input: { word: 'r' }, if_not_exists: 'create' });
    const frames = framesOf(text);
    expect(text.startsWith('retry:')).toBe(false);
    expect(frames[0]).toEqual(expect.arrayContaining(['event: metadata']));
    for (const frame of frames) expect(frame.some((line) => line.startsWith('event: '))).toBe(true);
    expect(frames.flat().some((line) => line.startsWith('retry:'))).toBe(false);
  });

  it('stateless POST /runs/stream and a join of the run from its start (Last-Event-ID -1) the same', async () => {
    const text = await streamText(`${api.app.url}/runs/stream`, { assistant_id: 'lg-two', input: { word: 's' }, on_completion: 'keep' });
    expect(framesOf(text)[0]).toEqual(expect.arrayContaining(['event: metadata']));

    const thread = randomUUID();
    const run = await api.client.runs.create(thread, 'lg-two', { input: { word: 'j' }, ifNotExists: 'create' });
    await api.runUntil(run.run_id, 'completed');
    const res = await fetch(`${api.app.url}/threads/${thread}/runs/${run.run_id}/stream`, { headers: { 'Last-Event-ID': '-1' } });
    const joined = framesOf(await res.text());
    expect(joined[0]).toEqual(expect.arrayContaining(['event: metadata']));
    expect(joined.flat().some((line) => line.startsWith('retry:'))).toBe(false);
  });

  it('the SDK sees metadata first and no empty part, on stream and joinStream', async () => {
    const thread = randomUUID();
    const parts = await collect(api.client.runs.stream(thread, 'lg-two', { input: { word: 'p' }, ifNotExists: 'create' }));
    expect(parts[0]!.event).toBe('metadata');
    expect(parts.filter((p) => p.event === '')).toEqual([]);
    const run = await api.client.runs.create(thread, 'lg-two', { input: { word: 'q' } });
    const joined = await collect(api.client.runs.joinStream(thread, run.run_id, { lastEventId: '-1' }));
    expect(joined[0]!.event).toBe('metadata');
    expect(joined.filter((p) => p.event === '')).toEqual([]);
  });

  it("SDK 2.0 (its decoder yields a part for any frame) sees the server's parts only: metadata, then the values", async () => {
    const client = new Sdk2Client({ apiUrl: api.app.url, apiKey: null });
    const thread = randomUUID();
    const parts = await collect(client.runs.stream(thread, 'lg-two', { input: { word: 'v2' }, ifNotExists: 'create' }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values']);
    expect(parts.at(-1)!.data).toEqual({ steps: ['first', 'second'], word: 'v2' });
    const run = await client.runs.create(thread, 'lg-two', { input: { word: 'v3' } });
    const joined = await collect(client.runs.joinStream(thread, run.run_id, { lastEventId: '-1' }));
    expect(joined[0]!.event).toBe('metadata');
    expect(joined.filter((p) => p.event === '')).toEqual([]);
    expect(joined.at(-1)).toMatchObject({ event: 'values', data: { word: 'v3' } });
  });

  it('SDK 2.0 joins a run with several stream modes (it sends them as one JSON string): accepted, not 400', async () => {
    const client = new Sdk2Client({ apiUrl: api.app.url, apiKey: null });
    const thread = randomUUID();
    const run = await client.runs.create(thread, 'lg-two', { input: { word: 'v4' }, ifNotExists: 'create', streamMode: ['values', 'updates'] });
    const joined = await collect(client.runs.joinStream(thread, run.run_id, { lastEventId: '-1', streamMode: ['values', 'updates'] }));
    expect(joined[0]!.event).toBe('metadata');
    expect(new Set(joined.map((p) => p.event))).toEqual(new Set(['metadata', 'values', 'updates']));
    expect(joined.filter((p) => p.event === 'values').at(-1)).toMatchObject({ data: { word: 'v4', steps: ['first', 'second'] } });
  });
});

describe.each(BACKENDS)('LangGraph streams kept alive with bare comment lines (%s)', (backend) => {
  const api = useLangGraphApi(backend, { SERVICE_SSE_HEARTBEAT_MS: '20' });

  it('a held run: `: keep-alive` lines without a blank line after them, and the SDK sees no empty part', async () => {
    gates.waiting = 0;
    const thread = randomUUID();
    let runId: string | undefined;
    const streamed = collect(api.client.runs.stream(thread, 'lg-gated', { input: { word: 'hold' }, ifNotExists: 'create', onRunCreated: (meta) => (runId = meta.run_id) }));
    await waitFor('the gated node', () => gates.waiting > 0 && runId !== undefined);
    // The same run joined raw, read while its node holds until keep-alives came, then to its end.
    const joined = await fetch(`${api.app.url}/threads/${thread}/runs/${runId}/stream`, { headers: { 'Last-Event-ID': '-1' } });
    const reader = joined.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readMore = async () => {
      const { value, done } = await reader.read();
      if (value) text += decoder.decode(value, { stream: true });
      return done;
    };
    await waitFor('two keep-alive lines while the node holds', async () => (await readMore()) || (text.match(/: keep-alive\n/g)?.length ?? 0) >= 2);
    gates.release();
    while (!(await readMore()));
    expect(text).toContain(': keep-alive\n');
    expect(text).not.toContain(': keep-alive\n\n');
    const parts = await streamed;
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values', 'values']);
  });
});
