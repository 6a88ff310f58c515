import { jsonContains } from '../domain/json-contains.js';
import type { JsonObject } from '../domain/types.js';
import { assistantOf, type Assistant } from './assistants.js';
import type { LangGraphDeps } from './deps.js';
import { PageTexts } from './thread-rows.js';

/**
 * Search and count of a tenant's assistants (the graphs' defaults and its stored ones), bounded
 * in what they hold: stored assistants are read READS at a time and only what sorts a match is
 * kept; a page stops before its JSON would pass SERVICE_MAX_PAGE_BYTES (one assistant always
 * fits); a count by graph alone reads no assistant (the store's index).
 */

/** Stored assistants read at once (each at most 64 KiB of JSON): a search holds a few MiB of them, not every one. */
const READS = 50;

type SearchDeps = Pick<LangGraphDeps, 'agents' | 'assistants' | 'config'>;

export interface AssistantFilters {
  graph_id?: string | undefined;
  name?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface AssistantSearch extends AssistantFilters {
  sort_by: 'assistant_id' | 'graph_id' | 'name' | 'created_at' | 'updated_at';
  sort_order: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Only these fields of each assistant. */
  select?: readonly (keyof Assistant)[] | undefined;
}

/** A page of assistants as JSON texts; `total` how many match, `next` the next page's offset while more remain. */
export interface AssistantPage {
  texts: string[];
  total: number;
  next?: number;
}

/** Whether an assistant matches every filter given; metadata by JSON containment. */
function matches(a: Assistant, filters: AssistantFilters): boolean {
  return (
    (filters.graph_id === undefined || a.graph_id === filters.graph_id) &&
    (filters.name === undefined || a.name.toLowerCase().includes(filters.name.toLowerCase())) &&
    (filters.metadata === undefined || jsonContains(a.metadata, filters.metadata))
  );
}

/** The tenant's stored assistants matching `filters`, READS read at a time (one deleted meanwhile is left out). */
async function* storedMatches(deps: SearchDeps, tenant: string, filters: AssistantFilters): AsyncGenerator<Assistant[]> {
  const ids = await deps.assistants.ids(tenant);
  for (let at = 0; at < ids.length; at += READS) {
    const batch = await deps.assistants.getMany(tenant, ids.slice(at, at + READS));
    yield batch.filter((a): a is Assistant => a !== null && matches(a, filters));
  }
}

/** How many of the tenant's assistants match `filters`; by graph alone (or nothing) from the store's index. */
export async function countAssistants(deps: SearchDeps, tenant: string, filters: AssistantFilters): Promise<number> {
  let count = deps.agents.list().filter((agent) => matches(assistantOf(agent), filters)).length;
  if (filters.name === undefined && filters.metadata === undefined) return count + (await deps.assistants.count(tenant, filters.graph_id));
  for await (const batch of storedMatches(deps, tenant, filters)) count += batch.length;
  return count;
}

/** What a search keeps of a match until its page is chosen: what sorts it. */
interface Match {
  id: string;
  graph: string;
  key: string;
}

/**
 * One page of the assistants matching `search`, sorted by `sort_by` (ties by graph id, then
 * assistant id), each with the fields selected: at most `limit`, and no more than
 * SERVICE_MAX_PAGE_BYTES of JSON (UTF-8; one assistant always fits).
 */
export async function searchAssistants(deps: SearchDeps, tenant: string, search: AssistantSearch): Promise<AssistantPage> {
  const { sort_by: by, offset } = search;
  const match = (a: Assistant): Match => ({ id: a.assistant_id, graph: a.graph_id, key: a[by] });
  const defaults = new Map(
    deps.agents
      .list()
      .map(assistantOf)
      .filter((a) => matches(a, search))
      .map((a) => [a.assistant_id, a]),
  );
  const found = [...defaults.values()].map(match);
  for await (const batch of storedMatches(deps, tenant, search)) found.push(...batch.map(match));
  const sign = search.sort_order === 'asc' ? 1 : -1;
  found.sort((a, b) => sign * a.key.localeCompare(b.key) || a.graph.localeCompare(b.graph) || a.id.localeCompare(b.id));

  const page = found.slice(offset, offset + search.limit);
  const answer = new PageTexts(deps.config.SERVICE_MAX_PAGE_BYTES);
  for (let at = 0; at < page.length; at += READS) {
    const part = page.slice(at, at + READS);
    const read = await deps.assistants.getMany(tenant, part.filter((m) => !defaults.has(m.id)).map((m) => m.id));
    for (const [i, m] of part.entries()) {
      const assistant = defaults.get(m.id) ?? read.shift();
      // One deleted since the matches were read takes its place in the order, answered as gone.
      if (!assistant) continue;
      if (!answer.add(m.id, JSON.stringify(selected(assistant, search.select)))) return { texts: answer.texts, total: found.length, next: offset + at + i };
    }
  }
  const end = offset + page.length;
  return { texts: answer.texts, total: found.length, ...(end < found.length ? { next: end } : {}) };
}

/** The fields of an assistant named by `select`, all without it. */
function selected(assistant: Assistant, select: readonly (keyof Assistant)[] | undefined): JsonObject | Assistant {
  return select ? Object.fromEntries(select.map((field) => [field, assistant[field]])) : assistant;
}
