/** One page of a list, newest first. */
export interface Page<T> {
  items: T[];
  /** Position after the last item of the page, when more may follow. */
  next?: number;
}
