import {
  DEFAULT_ASSISTANT_LIMITS,
  type AssistantChange,
  type AssistantLimits,
  type AssistantRecord,
  type AssistantStore,
  type AssistantVersionRecord,
  type StoredAssistant,
} from '../../ports/assistant-store.js';
import { tooManyAssistants, tooManyAssistantVersions } from '../shared/assistant-limits.js';

interface Stored {
  /** The assistant as it reads, as JSON (as the Redis adapter keeps it). */
  latest: string;
  /** Its versions as JSON, version 1 first. */
  versions: string[];
}

/** Stored assistants in memory (the embedded mode), with the Redis adapter's bounds. */
export class MemoryAssistantStore implements AssistantStore {
  private readonly tenants = new Map<string, Map<string, Stored>>();
  private readonly limits: AssistantLimits;

  constructor(limits: Partial<AssistantLimits> = {}) {
    this.limits = { ...DEFAULT_ASSISTANT_LIMITS, ...limits };
  }

  private tenant(tenant: string): Map<string, Stored> {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = new Map()));
    return t;
  }

  async get(tenant: string, assistantId: string): Promise<StoredAssistant | null> {
    const stored = this.tenants.get(tenant)?.get(assistantId);
    return stored ? { assistant: JSON.parse(stored.latest) as AssistantRecord, versions: stored.versions.length } : null;
  }

  async list(tenant: string): Promise<AssistantRecord[]> {
    return [...(this.tenants.get(tenant)?.values() ?? [])].map((s) => JSON.parse(s.latest) as AssistantRecord);
  }

  async create(tenant: string, assistant: AssistantRecord): Promise<AssistantRecord | null> {
    const t = this.tenant(tenant);
    const existing = t.get(assistant.assistant_id);
    if (existing) return JSON.parse(existing.latest) as AssistantRecord;
    if (t.size >= this.limits.maxPerTenant) throw tooManyAssistants(this.limits.maxPerTenant);
    const { updated_at: _updated, ...version } = assistant;
    t.set(assistant.assistant_id, { latest: JSON.stringify(assistant), versions: [JSON.stringify(version)] });
    return null;
  }

  async addVersion(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    const stored = this.tenants.get(tenant)?.get(latest.assistant_id);
    if (!stored) return 'missing';
    if (stored.versions.length !== versions) return 'stale';
    if (versions >= this.limits.maxVersions) throw tooManyAssistantVersions(this.limits.maxVersions);
    const { updated_at, ...version } = latest;
    stored.versions.push(JSON.stringify({ ...version, created_at: updated_at }));
    stored.latest = JSON.stringify(latest);
    return 'ok';
  }

  async setLatest(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    const stored = this.tenants.get(tenant)?.get(latest.assistant_id);
    if (!stored) return 'missing';
    if (stored.versions.length !== versions) return 'stale';
    stored.latest = JSON.stringify(latest);
    return 'ok';
  }

  async versions(tenant: string, assistantId: string): Promise<AssistantVersionRecord[] | null> {
    const stored = this.tenants.get(tenant)?.get(assistantId);
    return stored ? stored.versions.map((v) => JSON.parse(v) as AssistantVersionRecord).reverse() : null;
  }

  async delete(tenant: string, assistantId: string): Promise<boolean> {
    return this.tenants.get(tenant)?.delete(assistantId) ?? false;
  }
}
