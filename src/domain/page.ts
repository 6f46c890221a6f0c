/** One page of a list, newest first. */
export interface Page<T> {
  items: T[];
  /** Position after the last item of the page, when more may follow. */
  next?: number;
}

/**
 * A page of templates, revisions or releases ends before its items' JSON passes this many bytes (it always holds
 * one item, and no item is near this size); the rest follows in the next page. With `limit`, it bounds what one
 * request makes the server hold in memory.
 */
export const PAGE_MAX_BYTES = 8 * 1024 * 1024;
