import type { IncomingHttpHeaders } from 'node:http';
import type { RunCreate } from '../../langgraph-server/types.js';

/** Headers never copied: credentials. */
const SECRET = new Set(['x-api-key', 'x-tenant-id', 'x-service-key']);

/**
 * A run's body with the request's `x-*` headers and `user-agent` in `config.configurable`, as
 * LangGraph's server gives them to graphs (a graph reads `config.configurable["x-my-header"]`);
 * they win over the body's keys of the same name. Credentials are left out: `x-api-key`,
 * `x-tenant-id`, `x-service-key` and the header SERVICE_API_KEY_HEADER names.
 */
export function withHeaderConfigurable(body: RunCreate, headers: IncomingHttpHeaders, apiKeyHeader: string): RunCreate {
  const secret = apiKeyHeader.toLowerCase();
  const copied: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SECRET.has(name) || name === secret) continue;
    if (name.startsWith('x-') || name === 'user-agent') copied[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (Object.keys(copied).length === 0) return body;
  return { ...body, config: { ...body.config, configurable: { ...body.config?.configurable, ...copied } } };
}
