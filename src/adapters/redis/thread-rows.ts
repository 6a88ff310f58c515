import type { Checkpoint, RunStatus } from '../../domain/types.js';
import type { ThreadRow } from '../../ports/store.js';
import type { RedisContext } from './context.js';

/**
 * {@link Store.listThreadRows} on Redis: one page of a tenant's sessions with their latest run
 * and checkpoint in one script (`listThreads-1.lua`), answered as one string split at once (rows
 * apart by \1, fields by \0) instead of hundreds of nested replies. A session whose state has
 * more keys than the script reads is read on its own (`latestOf`, the session store's
 * `getCheckpoint`); one past the call's byte budget is left to the caller.
 */
export async function listThreadRows(
  c: RedisContext,
  latestOf: (sessionId: string) => Promise<Checkpoint | null>,
  tenant: string,
  page: { offset: number; limit: number },
  maxStateBytes: number,
): Promise<ThreadRow[]> {
  const { keys } = c;
  const reply = String(await c.script<string>('listThreads', [keys.sessions(tenant)], [keys.tenantPrefix(tenant), page.offset, page.offset + page.limit - 1, maxStateBytes]));
  if (reply === '') return [];
  const rows: ThreadRow[] = [];
  /** Rows with a large state, read on their own (rare): their index in `rows`. */
  const large: number[] = [];
  for (const line of reply.split('\u0001')) {
    const [id = '', agentId = '', createdAt = '', updatedAt = '', metadata = '{}', status = '', error = '', seq = '', kind = '0', checkpointSeq = '', node = '', at = '', state = ''] =
      line.split('\u0000');
    const row: ThreadRow = {
      id,
      agent_id: agentId,
      created_at: createdAt,
      updated_at: updatedAt,
      metadata,
      run: status ? { status: status as RunStatus, ...(error ? { error: JSON.parse(error) as string } : {}), ...(seq ? { seq_num: Number(seq) } : {}) } : null,
    };
    if (kind === '0') row.checkpoint = null;
    else if (kind === '1') row.checkpoint = { seq_num: Number(checkpointSeq), node_id: node, created_at: at, state };
    else if (kind === '2') large.push(rows.length);
    // Kind 3 (past the budget) is left to the caller.
    rows.push(row);
  }
  // A large state is scanned on its own.
  await Promise.all(
    large.map(async (at) => {
      const row = rows[at]!;
      const latest = await latestOf(row.id);
      row.checkpoint = latest && { seq_num: latest.seq_num, node_id: latest.node_id, created_at: latest.created_at, state: JSON.stringify(latest.state) };
    }),
  );
  return rows;
}
