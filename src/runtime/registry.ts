import { builtInAgents } from '../agents/index.js';
import type { Agent } from './agent.js';
import { importModule } from './import-module.js';

/** The agents a process knows, by id. API replicas and workers load the same set. */
export class AgentRegistry {
  private readonly byId: ReadonlyMap<string, Agent>;

  constructor(agents: readonly Agent[]) {
    const byId = new Map<string, Agent>();
    for (const agent of agents) {
      if (byId.has(agent.id)) throw new Error(`Agent "${agent.id}" is registered twice.`);
      byId.set(agent.id, agent);
    }
    this.byId = byId;
  }

  get(id: string): Agent | undefined {
    return this.byId.get(id);
  }

  list(): Agent[] {
    return [...this.byId.values()];
  }
}

function isAgent(value: unknown): value is Agent {
  const v = value as Partial<Agent> | null;
  return typeof v === 'object' && v !== null && typeof v.id === 'string' && typeof v.next === 'function';
}

/**
 * The built-in agents, or those of AGENTS_MODULE: a `.js`, `.mjs` or `.ts` module whose
 * default export is an array of agents (made with `defineAgent`) or whose named exports are agents.
 */
export async function loadAgents(modulePath: string | undefined): Promise<AgentRegistry> {
  if (!modulePath) return new AgentRegistry(builtInAgents);
  const module = await importModule(modulePath);
  const candidates = Array.isArray(module.default) ? (module.default as unknown[]) : Object.values(module);
  const agents = candidates.filter(isAgent);
  if (agents.length === 0) throw new Error(`AGENTS_MODULE ${modulePath} exports no agents.`);
  return new AgentRegistry(agents);
}
