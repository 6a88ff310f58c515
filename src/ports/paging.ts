/** Paging of list reads. */
export interface Page {
  limit: number;
  offset: number;
}

export interface SessionListOptions extends Page {
  agent_id?: string;
  /**
   * Only the sessions whose metadata holds this top-level key with this scalar value (string,
   * number, boolean or null), from the backend's metadata index; not with `agent_id`.
   */
  metadata?: { key: string; value: string | number | boolean | null };
  /**
   * Only the sessions whose metadata has more scalar pairs than the index takes for one session
   * (domain/metadata-pairs.ts): listed apart, read beside a pair's list.
   */
  metadataOverflow?: boolean;
}

/** A page of a list read that is also bounded in bytes (history, whose items can be large). */
export interface BytePage extends Page {
  /** Stop adding items once their JSON passes this many bytes (the first item is always included). */
  maxBytes: number;
}
