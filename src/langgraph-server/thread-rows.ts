import type { JsonObject, Session } from '../domain/types.js';
import type { ThreadRow } from '../ports/store.js';
import { assistantIdOf } from './assistants.js';
import { threadMetadata } from './thread-facts.js';
import type { ThreadStatus } from './types.js';

/** A page of threads as JSON texts, and a thread as JSON from a {@link ThreadRow}'s stored texts. */

/**
 * The threads of a page, their JSON texts up to the page's bytes (UTF-8): `add` answers false
 * once a thread no longer fits (the first always does). Bytes are counted exactly only once
 * three bytes a character could pass the bound.
 */
export class PageTexts {
  readonly ids: string[] = [];
  readonly texts: string[] = [];
  /** `[`, `]`, and a comma between two threads: exact once {@link exact}. */
  private bytes = 2;
  private exact = false;
  /** The same in characters (UTF-8 takes at most three bytes for one). */
  private chars = 2;

  constructor(readonly maxBytes: number) {}

  add(id: string, text: string): boolean {
    const comma = this.texts.length > 0 ? 1 : 0;
    this.chars += text.length + comma;
    if (!this.exact && this.chars * 3 > this.maxBytes) {
      this.exact = true;
      this.bytes = 2 + this.texts.reduce((sum, kept) => sum + Buffer.byteLength(kept), 0) + Math.max(0, this.texts.length - 1);
    }
    if (this.exact) {
      const size = Buffer.byteLength(text) + comma;
      if (this.texts.length > 0 && this.bytes + size > this.maxBytes) return false;
      this.bytes += size;
    }
    this.ids.push(id);
    this.texts.push(text);
    return true;
  }

  page(more: boolean): { ids: string[]; texts: string[]; more: boolean } {
    return { ids: this.ids, texts: this.texts, more };
  }
}

/** The session a thread row is. */
export function sessionOf(tenant: string, row: ThreadRow): Session {
  return { id: row.id, agent_id: row.agent_id, tenant_id: tenant, created_at: row.created_at, updated_at: row.updated_at, metadata: JSON.parse(row.metadata) as JsonObject };
}

/** `JSON.stringify` of the {@link Thread} a row is with `status` (no interrupts), from its stored texts. */
export function threadText(row: ThreadRow, status: ThreadStatus): string {
  const error = status === 'error' ? (row.run?.error ?? null) : null;
  return (
    `{"thread_id":${JSON.stringify(row.id)},"created_at":${JSON.stringify(row.created_at)},"updated_at":${JSON.stringify(row.updated_at)},` +
    `"state_updated_at":${JSON.stringify(row.checkpoint?.created_at ?? row.created_at)},"metadata":${metadataText(row)},"status":"${status}",` +
    `"values":${row.checkpoint?.state ?? '{}'},"interrupts":{},"config":{},"error":${JSON.stringify(error)}}`
  );
}

/** {@link metadataText} answers by agent and metadata text, while few (a list shows the same threads again and again). */
const metadataTexts = new Map<string, Map<string, string>>();
const METADATA_TEXTS = 4096;
let metadataTextsKept = 0;

/**
 * {@link threadMetadata} as JSON, from the session's metadata text: the graph's names appended
 * where the metadata has neither, else made from the parsed metadata once and kept.
 */
function metadataText(row: ThreadRow): string {
  const { metadata } = row;
  if (row.agent_id === '') return metadata;
  if (!metadata.includes('"graph_id"') && !metadata.includes('"assistant_id"')) {
    const names = `"graph_id":${JSON.stringify(row.agent_id)},"assistant_id":${JSON.stringify(assistantIdOf(row.agent_id))}}`;
    return metadata === '{}' ? `{${names}` : `${metadata.slice(0, -1)},${names}`;
  }
  let byText = metadataTexts.get(row.agent_id);
  let text = byText?.get(metadata);
  if (text === undefined) {
    text = JSON.stringify(threadMetadata({ agent_id: row.agent_id, metadata: JSON.parse(metadata) as JsonObject }));
    if (metadataTextsKept >= METADATA_TEXTS) {
      metadataTexts.clear();
      metadataTextsKept = 0;
      byText = undefined;
    }
    if (!byText) metadataTexts.set(row.agent_id, (byText = new Map()));
    byText.set(metadata, text);
    metadataTextsKept += 1;
  }
  return text;
}
