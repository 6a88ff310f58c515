import {
  DEFAULT_ASSISTANT_LIMITS,
  type AssistantChange,
  type AssistantLimits,
  type AssistantRecord,
  type AssistantStore,
  type AssistantVersionRecord,
  type StoredAssistant,
} from '../../ports/assistant-store.js';
import { assistantsTooLarge, tooManyAssistants, tooManyAssistantVersions } from '../shared/assistant-limits.js';

interface Stored {
  /** The assistant as it reads, as JSON (as the Redis adapter keeps it). */
  latest: string;
  /** Its graph, as the count by graph reads it. */
  graphId: string;
  /** Its versions as JSON, version 1 first. */
  versions: string[];
}

interface Tenant {
  assistants: Map<string, Stored>;
  /** UTF-8 bytes of every `latest` and version held. */
  bytes: number;
}

/** Stored assistants in memory (the embedded mode), with the Redis adapter's bounds. */
export class MemoryAssistantStore implements AssistantStore {
  private readonly tenants = new Map<string, Tenant>();
  private readonly limits: AssistantLimits;

  constructor(limits: Partial<AssistantLimits> = {}) {
    this.limits = { ...DEFAULT_ASSISTANT_LIMITS, ...limits };
  }

  private tenant(tenant: string): Tenant {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = { assistants: new Map(), bytes: 0 }));
    return t;
  }

  private stored(tenant: string, assistantId: string): Stored | undefined {
    return this.tenants.get(tenant)?.assistants.get(assistantId);
  }

  /** Adds `grows` bytes to the tenant's, refusing what would pass the cap (a change that does not grow always passes). */
  private grow(t: Tenant, grows: number): void {
    if (grows > 0 && t.bytes + grows > this.limits.maxTenantBytes) throw assistantsTooLarge(this.limits.maxTenantBytes);
    t.bytes += grows;
  }

  async get(tenant: string, assistantId: string): Promise<StoredAssistant | null> {
    const stored = this.stored(tenant, assistantId);
    return stored ? { assistant: JSON.parse(stored.latest) as AssistantRecord, versions: stored.versions.length } : null;
  }

  async ids(tenant: string): Promise<string[]> {
    return [...(this.tenants.get(tenant)?.assistants.keys() ?? [])];
  }

  async getMany(tenant: string, assistantIds: readonly string[]): Promise<(AssistantRecord | null)[]> {
    return assistantIds.map((id) => {
      const stored = this.stored(tenant, id);
      return stored ? (JSON.parse(stored.latest) as AssistantRecord) : null;
    });
  }

  async count(tenant: string, graphId?: string): Promise<number> {
    const assistants = this.tenants.get(tenant)?.assistants;
    if (!assistants || graphId === undefined) return assistants?.size ?? 0;
    let count = 0;
    for (const stored of assistants.values()) if (stored.graphId === graphId) count += 1;
    return count;
  }

  async usedBytes(tenant: string): Promise<number> {
    return this.tenants.get(tenant)?.bytes ?? 0;
  }

  async create(tenant: string, assistant: AssistantRecord): Promise<AssistantRecord | null> {
    const t = this.tenant(tenant);
    const existing = t.assistants.get(assistant.assistant_id);
    if (existing) return JSON.parse(existing.latest) as AssistantRecord;
    if (t.assistants.size >= this.limits.maxPerTenant) throw tooManyAssistants(this.limits.maxPerTenant);
    const { updated_at: _updated, ...version } = assistant;
    const [latest, first] = [JSON.stringify(assistant), JSON.stringify(version)];
    this.grow(t, Buffer.byteLength(latest) + Buffer.byteLength(first));
    t.assistants.set(assistant.assistant_id, { latest, graphId: assistant.graph_id, versions: [first] });
    return null;
  }

  async addVersion(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    const { updated_at, ...version } = latest;
    return this.change(tenant, latest, JSON.stringify({ ...version, created_at: updated_at }), versions);
  }

  setLatest(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    return this.change(tenant, latest, undefined, versions);
  }

  /** Replaces the latest, adding `version` when given, as changeAssistant-4.lua does. */
  private async change(tenant: string, latest: AssistantRecord, version: string | undefined, versions: number): Promise<AssistantChange> {
    const stored = this.stored(tenant, latest.assistant_id);
    if (!stored) return 'missing';
    if (stored.versions.length !== versions) return 'stale';
    if (version !== undefined && versions >= this.limits.maxVersions) throw tooManyAssistantVersions(this.limits.maxVersions);
    const text = JSON.stringify(latest);
    this.grow(this.tenant(tenant), Buffer.byteLength(text) - Buffer.byteLength(stored.latest) + (version === undefined ? 0 : Buffer.byteLength(version)));
    if (version !== undefined) stored.versions.push(version);
    stored.latest = text;
    stored.graphId = latest.graph_id;
    return 'ok';
  }

  async versions(tenant: string, assistantId: string): Promise<AssistantVersionRecord[] | null> {
    const stored = this.stored(tenant, assistantId);
    return stored ? stored.versions.map((v) => JSON.parse(v) as AssistantVersionRecord).reverse() : null;
  }

  async delete(tenant: string, assistantId: string): Promise<boolean> {
    const t = this.tenants.get(tenant);
    const stored = t?.assistants.get(assistantId);
    if (!t || !stored) return false;
    t.assistants.delete(assistantId);
    t.bytes -= Buffer.byteLength(stored.latest) + stored.versions.reduce((sum, v) => sum + Buffer.byteLength(v), 0);
    return true;
  }
}
