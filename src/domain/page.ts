// Pages of lists: their size bounds and the position the next page starts from.

/** One page of a list, newest first. */
export interface Page<T, P = number> {
  items: T[];
  /** Position after the last item of the page, when more may follow. */
  next?: P;
}

/** The scopes a list of templates may be narrowed to (docs/api.md, "Scopes"). */
export const LIST_SCOPES = ['own', 'public', 'platform'] as const;
export type ListScope = (typeof LIST_SCOPES)[number];

/** The orders of a list of templates: newest first, or most used first (by `runtimeInMin`, then newest). */
export const LIST_SORTS = ['newest', 'popular'] as const;
export type ListSort = (typeof LIST_SORTS)[number];

/** A position in a list of templates: the last item's `seq`, and, in the popular order, its runtime. */
export interface ListPosition {
  seq: number;
  runtime?: number;
}

/**
 * A page of templates, revisions or releases ends before its items' JSON passes this many bytes (it always holds
 * one item, and no item is near this size); the rest follows in the next page. With `limit`, it bounds what one
 * request makes the server hold in memory.
 */
export const PAGE_MAX_BYTES = 8 * 1024 * 1024;
