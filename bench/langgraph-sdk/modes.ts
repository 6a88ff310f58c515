import { performance } from 'node:perf_hooks';
import { Client } from '@langchain/langgraph-sdk';

/** The graph every mode runs: examples/langgraph/echo.ts as bench/langgraph serves it. */
export const GRAPH = 'lg-echo';

/**
 * What one run is, per mode: the SDK's `Client` on the LangGraph Server API routes, or plain
 * fetch on the native routes, each to the run's end.
 */
export const MODES = [
  { id: 'native-wait', label: 'native POST /api/runs/wait', family: 'wait', native: true },
  { id: 'sdk-wait', label: 'SDK runs.wait(null) (stateless)', family: 'wait', native: false },
  { id: 'sdk-wait-thread', label: 'SDK runs.wait(thread) (a thread per client)', family: 'wait', native: false },
  { id: 'sdk-wait-assistant', label: 'SDK runs.wait(thread, stored assistant)', family: 'wait', native: false },
  { id: 'native-stream', label: 'native POST /api/runs/stream', family: 'stream', native: true },
  { id: 'sdk-stream', label: 'SDK runs.stream(null) (stateless)', family: 'stream', native: false },
] as const;

export type ModeId = (typeof MODES)[number]['id'];

/**
 * One closed-loop client's own SDK client (the SDK caps each at 4 requests at once), its thread
 * (`sdk-wait-thread`, `sdk-wait-assistant`) and the assistant its runs name (the graph id, or a
 * stored assistant of that graph it created: `sdk-wait-assistant`).
 */
interface Slot {
  client: Client;
  threadId?: string;
  assistantId: string;
  stored?: boolean;
}

/** A run's latency in ms, or why it failed. */
type Outcome = number | string;

const WAIT_MS = 30_000;
const input = (i: number) => ({ message: `run ${i}` });

async function nativeWait(apiUrl: string, i: number): Promise<Outcome> {
  const res = await fetch(`${apiUrl}/api/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: GRAPH, input: input(i), wait_ms: WAIT_MS }),
  });
  const text = await res.text();
  const body = res.status === 200 ? (JSON.parse(text) as { status?: string; state?: { echoed?: unknown } }) : undefined;
  return body?.status === 'completed' && body.state?.echoed === true ? 0 : `native-wait answered ${res.status}: ${text.slice(0, 300)}`;
}

async function nativeStream(apiUrl: string, i: number): Promise<Outcome> {
  const res = await fetch(`${apiUrl}/api/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: GRAPH, input: input(i) }),
  });
  const text = await res.text();
  return res.status === 200 && text.includes('"type":"completed"') ? 0 : `native-stream answered ${res.status}: ${text.slice(-300)}`;
}

async function sdkWait(slot: Slot, i: number): Promise<Outcome> {
  const payload = { input: input(i) };
  const values = (await (slot.threadId ? slot.client.runs.wait(slot.threadId, slot.assistantId, payload) : slot.client.runs.wait(null, slot.assistantId, payload))) as { echoed?: unknown };
  return values.echoed === true ? 0 : `runs.wait answered ${JSON.stringify(values).slice(0, 300)}`;
}

async function sdkStream(slot: Slot, i: number): Promise<Outcome> {
  let echoed = false;
  for await (const chunk of slot.client.runs.stream(null, GRAPH, { input: input(i) })) {
    if (chunk.event === 'values' && (chunk.data as { echoed?: unknown }).echoed === true) echoed = true;
  }
  return echoed ? 0 : 'runs.stream ended without values {echoed: true}';
}

/**
 * The clients of one batch: `run(i)` takes a free slot (one per closed-loop client), does one
 * run of `mode` to its end and answers its latency; `close` deletes the threads it created.
 */
export async function modeRunner(apiUrl: string, mode: ModeId, clients: number): Promise<{ run: (i: number) => Promise<Outcome>; close: () => Promise<void> }> {
  const free: Slot[] = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
      if (mode === 'sdk-wait-assistant') {
        // A configuration of the graph as users store one: a name, metadata and a config of its own.
        const assistant = await client.assistants.create({ graphId: GRAPH, name: 'bench', metadata: { bench: true }, config: { configurable: { tone: 'plain' } } });
        return { client, threadId: (await client.threads.create()).thread_id, assistantId: assistant.assistant_id, stored: true };
      }
      return mode === 'sdk-wait-thread' ? { client, threadId: (await client.threads.create()).thread_id, assistantId: GRAPH } : { client, assistantId: GRAPH };
    }),
  );
  const all = [...free];
  const once = (slot: Slot, i: number): Promise<Outcome> => {
    switch (mode) {
      case 'native-wait': return nativeWait(apiUrl, i);
      case 'native-stream': return nativeStream(apiUrl, i);
      case 'sdk-wait':
      case 'sdk-wait-thread':
      case 'sdk-wait-assistant': return sdkWait(slot, i);
      case 'sdk-stream': return sdkStream(slot, i);
    }
  };
  return {
    run: async (i) => {
      const slot = free.pop()!;
      const sent = performance.now();
      try {
        const outcome = await once(slot, i);
        return typeof outcome === 'string' ? outcome : performance.now() - sent;
      } catch (error) {
        return `${mode}: ${String(error)}`;
      } finally {
        free.push(slot);
      }
    },
    close: async () => {
      await Promise.all(all.map((s) => (s.threadId ? s.client.threads.delete(s.threadId) : undefined)));
      await Promise.all(all.map((s) => (s.stored ? s.client.assistants.delete(s.assistantId) : undefined)));
    },
  };
}
