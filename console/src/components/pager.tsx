import { useLoad, type Loaded } from '../hooks.js';

/** Rows a list screen shows at a time. */
export const PAGE_SIZE = 20;

export interface Paged<T> extends Loaded<T[]> {
  /** The rows of this page. */
  rows: T[];
  /** Whether a next page exists: each read asks for one row more than it shows. */
  more: boolean;
}

/**
 * One page of a list read with `limit`/`offset`: page `page` (from 0) is read alone, never
 * the rows before it, so a list of any length costs one request of {@link PAGE_SIZE} + 1 rows.
 */
export function usePage<T>(load: (limit: number, offset: number) => Promise<T[]>, page: number, deps: unknown[]): Paged<T> {
  const loaded = useLoad(() => load(PAGE_SIZE + 1, page * PAGE_SIZE), [...deps, page]);
  return { ...loaded, rows: loaded.data?.slice(0, PAGE_SIZE) ?? [], more: (loaded.data?.length ?? 0) > PAGE_SIZE };
}

/** Previous / next buttons of a paged list, named by what they page through. */
export function Pager({ label, page, more, onPage }: { label: string; page: number; more: boolean; onPage(page: number): void }) {
  return (
    <nav class="pager" aria-label={`Pages of ${label}`}>
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span aria-live="polite">Page {page + 1}</span>
      <button type="button" disabled={!more} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}
