import { ConfigError } from '../../src/config.js';
import { chatAgent, type ChatAgentOptions } from './chat-agent.js';

/** A non-negative integer from `env[name]`, or `fallback` when unset; anything else throws naming the variable. */
function integerOf(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(name, `an integer ≥ 0, not "${raw}"`);
  return value;
}

function required(env: NodeJS.ProcessEnv, name: string, hint: string): string {
  const value = env[name];
  if (!value) throw new ConfigError(name, `not set; ${hint}`);
  return value;
}

/**
 * The chat agent's options from the environment, read once when the module loads: a missing or
 * bad value is a ConfigError naming the variable, which stops the process at start.
 *
 * - `OPENAI_BASE_URL`: the API, `…/v1` (default `https://api.openai.com/v1`)
 * - `OPENAI_API_KEY`: its key (required; any value for servers without keys, like Ollama)
 * - `LLM_MODEL`: the model (required)
 * - `LLM_SYSTEM_PROMPT`: a system message (optional)
 * - `LLM_MAX_RETRIES`: retries of a failed request (default 2)
 * - `LLM_TIMEOUT_MS`: longest wait for an answer to start, per try (default 600000)
 */
export function chatOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ChatAgentOptions {
  const timeoutMs = integerOf(env, 'LLM_TIMEOUT_MS', 600_000);
  if (timeoutMs < 1) throw new ConfigError('LLM_TIMEOUT_MS', 'at least 1');
  return {
    baseURL: env.OPENAI_BASE_URL || 'https://api.openai.com/v1',
    apiKey: required(env, 'OPENAI_API_KEY', 'set the API key (any value for a server without keys, like Ollama)'),
    model: required(env, 'LLM_MODEL', 'name the model to call, e.g. LLM_MODEL=llama3.2'),
    system: env.LLM_SYSTEM_PROMPT || undefined,
    maxRetries: integerOf(env, 'LLM_MAX_RETRIES', 2),
    timeoutMs,
  };
}

/** The module for AGENTS_MODULE: its default export, the agents it registers (here `llm-chat`). */
export default [chatAgent(chatOptionsFromEnv())];
