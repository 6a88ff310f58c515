import { isGraphAgent, type Agent, type GraphAgent, type NativeAgent } from './agent.js';
import { importAgentsModule } from './import-module.js';
import { AgentsModuleError, describeLoadError } from './load-error.js';

/**
 * The agents a process knows, by id. API replicas and workers load the same set; `dev --watch`
 * replaces it when the agents module changes.
 */
export class AgentRegistry {
  private byId: ReadonlyMap<string, Agent>;

  constructor(agents: readonly Agent[]) {
    this.byId = byIdOf(agents);
  }

  /** Serves `agents` from now on, in place of the ones before; runs already going keep theirs. */
  replace(agents: readonly Agent[]): void {
    this.byId = byIdOf(agents);
  }

  get(id: string): Agent | undefined {
    return this.byId.get(id);
  }

  /** The agent `id` when it is a native agent (made with `defineAgent`). */
  native(id: string): NativeAgent | undefined {
    const agent = this.byId.get(id);
    return agent && !isGraphAgent(agent) ? agent : undefined;
  }

  /** The agent `id` when it is a graph agent. */
  graph(id: string): GraphAgent | undefined {
    const agent = this.byId.get(id);
    return isGraphAgent(agent) ? agent : undefined;
  }

  list(): Agent[] {
    return [...this.byId.values()];
  }
}

function byIdOf(agents: readonly Agent[]): ReadonlyMap<string, Agent> {
  const byId = new Map<string, Agent>();
  for (const agent of agents) {
    if (byId.has(agent.id)) throw new Error(`Agent "${agent.id}" is registered twice.`);
    byId.set(agent.id, agent);
  }
  return byId;
}

function isAgent(value: unknown): value is NativeAgent {
  const v = value as Partial<NativeAgent> | null;
  return typeof v === 'object' && v !== null && typeof v.id === 'string' && typeof v.next === 'function';
}

/**
 * The agents of AGENTS_MODULE: a `.js`, `.mjs` or `.ts` module whose default export is an
 * array of agents (made with `defineAgent`) or whose named exports are agents. A module that
 * cannot load, or exports no agents, is an {@link AgentsModuleError} (one line); an error of
 * the module's own settings (a ConfigError it throws) is thrown as it is. Without a module, a
 * process serves the built-in agents its composition root gives it (src/main/process.ts).
 */
export async function loadAgents(modulePath: string): Promise<AgentRegistry> {
  return new AgentRegistry(await loadAgentsModule(modulePath));
}

/** The agents of the module at `modulePath`, imported afresh (see {@link loadAgents}). */
export async function loadAgentsModule(modulePath: string): Promise<Agent[]> {
  let exports: Record<string, unknown>;
  try {
    ({ exports } = await importAgentsModule(modulePath));
  } catch (error) {
    // By name: a module loaded through tsx may hold its own copy of config.ts's class.
    if ((error as Error | null)?.name === 'ConfigError') throw error;
    throw new AgentsModuleError(describeLoadError(modulePath, error), { cause: error });
  }
  const candidates = Array.isArray(exports.default) ? (exports.default as unknown[]) : Object.values(exports);
  const agents = candidates.filter(isAgent);
  if (agents.length === 0) {
    throw new AgentsModuleError(`${modulePath} exports no agents: export them made with defineAgent, as named exports or as the default export (an array)`);
  }
  const ids = agents.map((agent) => agent.id);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice) throw new AgentsModuleError(`${modulePath} exports two agents with the id "${twice}"; give each its own id`);
  return agents;
}
