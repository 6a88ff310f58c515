import type { StateSnapshot } from '@langchain/langgraph';
import { clip, END_NODE, errorMessage, MAX_CUSTOM_EVENT_BYTES, MAX_PROMPT_CHARS, type JsonObject } from '../domain/types.js';

/**
 * JSON of graph values: LangChain messages (and other objects with `toDict`) as their
 * dictionaries, `{ ...data, type }`, as LangGraph's server shows them.
 */
export function toJson(value: unknown): unknown {
  const text = jsonText(value);
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/** LangChain messages (objects with `toDict`) as their dictionaries, for JSON.stringify. */
function asDict(this: Record<string, unknown>, key: string, replaced: unknown): unknown {
  const raw = this[key] as { toDict?: () => { type: string; data: Record<string, unknown> } } | null;
  if (raw !== null && typeof raw === 'object' && typeof raw.toDict === 'function') {
    const { type, data } = raw.toDict();
    return { ...data, type };
  }
  return replaced;
}

/** The JSON text {@link toJson} parses; undefined for what JSON leaves out (undefined, a function). */
function jsonText(value: unknown): string | undefined {
  return JSON.stringify(value, asDict) as string | undefined;
}

/** The session's `node_id` for a LangGraph checkpoint: its next nodes, comma-separated, or `__end__`. */
export function nodeIdOf(next: readonly string[]): string {
  return next.length === 0 ? END_NODE : [...new Set(next)].join(',');
}

/** What an approval shows of an interrupt's value: a string, its prompt/question/description field, else its JSON. */
export function promptOf(value: unknown): string {
  if (typeof value === 'string') return clip(value, MAX_PROMPT_CHARS);
  if (value !== null && typeof value === 'object') {
    for (const field of ['prompt', 'question', 'description'] as const) {
      const text = (value as Record<string, unknown>)[field];
      if (typeof text === 'string' && text !== '') return clip(text, MAX_PROMPT_CHARS);
    }
  }
  return clip(JSON.stringify(toJson(value)) ?? 'null', MAX_PROMPT_CHARS);
}

/** Event data: JSON of at most `limit` bytes, else a note saying it was left out. */
export function eventData(value: unknown, limit = MAX_CUSTOM_EVENT_BYTES): unknown {
  const json = toJson(value);
  const bytes = Buffer.byteLength(JSON.stringify(json) ?? 'null');
  return bytes <= limit ? json : { omitted: `${bytes} bytes of JSON, more than ${limit}` };
}

/**
 * The native checkpoints of a graph session mirror its LangGraph checkpoints of the root
 * namespace: each holds the graph's values as JSON, with the keys that changed as its patch.
 */
export class StateMirror {
  private readonly known = new Map<string, string>();

  constructor(state: JsonObject) {
    for (const [key, value] of Object.entries(state)) this.known.set(key, JSON.stringify(value));
  }

  /**
   * The patch that takes the mirrored state to `values`: changed keys, and null for removed ones.
   * Each value is turned into JSON once, and parsed back only when it changed.
   */
  patch(values: unknown): JsonObject {
    const patch: JsonObject = {};
    const seen = new Set<string>();
    const entries = values !== null && typeof values === 'object' && !Array.isArray(values) && typeof (values as { toJSON?: unknown }).toJSON !== 'function' && typeof (values as { toDict?: unknown }).toDict !== 'function'
      ? Object.entries(values)
      : Object.entries((toJson(values) ?? {}) as JsonObject);
    for (const [key, value] of entries) {
      // As JSON.stringify of the whole object: a key whose value JSON leaves out is not there.
      const text = jsonText(value);
      if (text === undefined) continue;
      seen.add(key);
      if (this.known.get(key) !== text) {
        patch[key] = JSON.parse(text) as JsonObject[string];
        this.known.set(key, text);
      }
    }
    for (const key of this.known.keys()) {
      if (!seen.has(key) && this.known.get(key) !== 'null') {
        patch[key] = null;
        this.known.set(key, 'null');
      }
    }
    return patch;
  }
}

/** A LangGraph checkpoint reference as LangGraph's server shows it; null without one. */
export function checkpointRefOf(config: { configurable?: Record<string, unknown> } | undefined): JsonObject | null {
  const configurable = config?.configurable;
  if (!configurable?.thread_id) return null;
  return {
    thread_id: String(configurable.thread_id),
    checkpoint_ns: typeof configurable.checkpoint_ns === 'string' ? configurable.checkpoint_ns : '',
    checkpoint_id: typeof configurable.checkpoint_id === 'string' ? configurable.checkpoint_id : null,
    checkpoint_map: (configurable.checkpoint_map as JsonObject | undefined) ?? null,
  };
}

/**
 * A subgraph task's checkpoint as LangGraph's server shows it: its config's configurable as it
 * is (`thread_id` and the subgraph's `checkpoint_ns`; a checkpoint id only when it has one).
 */
function taskCheckpointOf(config: { configurable?: Record<string, unknown> }): JsonObject | null {
  const configurable = config.configurable;
  if (!configurable?.thread_id) return null;
  const ref: JsonObject = { thread_id: String(configurable.thread_id), checkpoint_ns: typeof configurable.checkpoint_ns === 'string' ? configurable.checkpoint_ns : '' };
  if (typeof configurable.checkpoint_id === 'string') ref.checkpoint_id = configurable.checkpoint_id;
  if (configurable.checkpoint_map != null) ref.checkpoint_map = configurable.checkpoint_map as JsonObject;
  return ref;
}

/** A state snapshot as LangGraph's server shows a thread's state (`ThreadState`), JSON. */
export function threadStateOf(snapshot: StateSnapshot): JsonObject {
  return toJson({
    values: snapshot.values,
    next: snapshot.next,
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error != null ? errorMessage(task.error) : null,
      interrupts: task.interrupts ?? [],
      path: task.path ?? null,
      checkpoint: task.state && 'configurable' in task.state ? taskCheckpointOf(task.state as { configurable?: Record<string, unknown> }) : null,
      state: task.state && 'values' in task.state ? threadStateOf(task.state) : null,
      result: task.result ?? null,
    })),
    metadata: snapshot.metadata ?? {},
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointRefOf(snapshot.config),
    parent_checkpoint: checkpointRefOf(snapshot.parentConfig),
  }) as JsonObject;
}
