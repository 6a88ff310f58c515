/**
 * `agentplane`: what an agent module and an embedding program import. Agents are graphs made
 * with `defineAgent` (a node is `async (state, ctx) => patch`); a module exporting them is
 * named by AGENTS_MODULE. `createAgentplane` builds the API for a Koa app of your own. The
 * webhook receiver and chat adapters are in `agentplane/integrations`, the typed HTTP client
 * in `agentplane/client`.
 */
export { defineAgent } from './runtime/agent.js';
export type {
  Agent,
  AgentDefinition,
  AgentEdge,
  AgentNode,
  InterruptDecision,
  InterruptRequest,
  NodeContext,
  NodeSpec,
  RetryPolicy,
} from './runtime/agent.js';
export { END_NODE } from './domain/types.js';
export type { ApprovalTimeoutAction, JsonObject, Run, RunStatus } from './domain/types.js';
export { createAgentplane } from './main/embed.js';
export type { Agentplane, AgentplaneOptions } from './main/embed.js';
export type { Composition } from './main/compose.js';
export type { RunControl, RunTicket, StartRunRequest } from './ports/run-control.js';
export { ConfigError, loadConfig, type Config } from './config.js';
