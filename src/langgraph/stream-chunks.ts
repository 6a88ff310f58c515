import { checkpointRefOf } from './values.js';

type Config = { configurable?: Record<string, unknown>; callbacks?: unknown } | undefined;

/** A run config as a client sees it: no callbacks, no `__` internals of its configurable. */
function publicConfig(config: Config): Config {
  if (!config?.configurable) return config;
  const { callbacks: _callbacks, ...rest } = config;
  return { ...rest, configurable: Object.fromEntries(Object.entries(config.configurable).filter(([key]) => !key.startsWith('__'))) };
}

/** A task of a debug or tasks chunk: its state config as the `checkpoint` it names (a subgraph's), as LangGraph's server shows it. */
function taskOf(task: Record<string, unknown>): Record<string, unknown> {
  const state = task.state as Config;
  const checkpoint = state && 'configurable' in state ? checkpointRefOf(state) : null;
  if (!checkpoint) return task;
  const { state: _state, ...rest } = task;
  return { ...rest, checkpoint };
}

/** A debug checkpoint (and a `checkpoints` chunk): `checkpoint` and `parent_checkpoint` references, `parent_config` in snake case, no internals. */
function checkpointOf(payload: Record<string, unknown>): Record<string, unknown> {
  const { parentConfig, ...rest } = payload as Record<string, unknown> & { parentConfig?: Config; config?: Config };
  return {
    ...rest,
    checkpoint: checkpointRefOf(payload.config as Config),
    parent_checkpoint: checkpointRefOf(parentConfig),
    ...(Array.isArray(payload.tasks) ? { tasks: (payload.tasks as Record<string, unknown>[]).map(taskOf) } : {}),
    config: publicConfig(payload.config as Config),
    parent_config: publicConfig(parentConfig),
  };
}

/**
 * A LangGraph stream chunk as LangGraph's server sends it to clients: `debug` checkpoints and
 * task results, `checkpoints` and `tasks` chunks name checkpoints as references (`checkpoint`,
 * `parent_checkpoint`: thread, namespace, id, map), without callbacks or other internals.
 */
export function clientChunkOf(mode: string, data: unknown): unknown {
  if (data === null || typeof data !== 'object') return data;
  const chunk = data as Record<string, unknown>;
  if (mode === 'checkpoints') return checkpointOf(chunk);
  if (mode === 'tasks') return taskOf(chunk);
  if (mode !== 'debug' || typeof chunk.payload !== 'object' || chunk.payload === null) return data;
  const payload = chunk.payload as Record<string, unknown>;
  if (chunk.type === 'checkpoint') return { ...chunk, payload: checkpointOf(payload) };
  if (chunk.type === 'task_result') return { ...chunk, payload: taskOf(payload) };
  return data;
}
