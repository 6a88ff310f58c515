import { AppError } from '../domain/errors.js';
import { deleteStoredAssistant } from './assistants.js';
import type { LangGraphDeps } from './deps.js';
import { deleteThread, type ThreadDeps } from './thread-actions.js';
import { searchThreads, THREAD_SCAN_LIMIT } from './threads.js';

/**
 * Deleting an assistant with its threads (`DELETE /assistants/{id}?delete_threads=true`): every
 * thread whose metadata names it (`assistant_id`, set by its runs), as a thread search finds
 * them (the metadata indexes), a page at a time; their active runs are cancelled first, as a
 * thread's deletion does.
 */
export async function deleteAssistant(
  deps: ThreadDeps & Pick<LangGraphDeps, 'assistants'>,
  tenant: string,
  assistantId: string,
  options: { deleteThreads: boolean; by: string },
): Promise<void> {
  const assistant = await deleteStoredAssistant(deps, tenant, assistantId);
  if (!options.deleteThreads) return;
  const gone = new Set<string>();
  for (;;) {
    const { ids, more } = await searchThreads(deps, tenant, {
      metadata: { assistant_id: assistant.assistant_id },
      limit: THREAD_SCAN_LIMIT,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
      // Ids alone: the page never stops early at its byte bound.
      select: ['thread_id'],
    });
    const left = ids.filter((id) => !gone.has(id));
    for (const id of left) {
      gone.add(id);
      await deleteThread(deps, tenant, id, options.by).catch((error: unknown) => {
        // Deleted meanwhile: nothing left to do.
        if (!(error instanceof AppError && error.code === 'not_found')) throw error;
      });
    }
    // Each page starts again at the newest: the threads deleted are gone from it.
    if (!more || left.length === 0) return;
  }
}
