// The small set of domain failures; the HTTP layer maps each to one problem type, in one place.

export interface FieldError {
  /** JSON Pointer to the offending value in the request, e.g. "/ports/1". */
  path: string;
  message: string;
  /** The part of the request it is in, when not the body. */
  in?: 'body' | 'query' | 'path' | 'header';
  /** The pattern the value broke, for programs (the message says it in words). */
  pattern?: string;
}

/** A key as a JSON Pointer segment (RFC 6901): "~" becomes "~0", "/" becomes "~1". */
export const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'precondition-failed'
  | 'idempotency-mismatch'
  | 'quota-exceeded'
  | 'unresolvable'
  | 'rate-limited'
  | 'unavailable';

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly errors: FieldError[];

  constructor(kind: ErrorKind, message: string, errors: FieldError[] = []) {
    super(message);
    this.kind = kind;
    this.errors = errors;
    this.name = 'DomainError';
  }
}

export const invalid = (detail: string, errors: FieldError[]) => new DomainError('invalid', detail, errors);
export const notFound = (what: string) => new DomainError('not-found', `No ${what} with that id is visible to this key.`);
export const forbidden = (detail: string) => new DomainError('forbidden', detail);
export const conflict = (detail: string, errors: FieldError[] = []) => new DomainError('conflict', detail, errors);
export const unavailable = (detail: string) => new DomainError('unavailable', detail);

/** Too many requests of a kind: retry after `retryAfterSeconds`. */
export class RateLimited extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(detail: string, retryAfterSeconds: number) {
    super('rate-limited', detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Is `error` a domain error of this kind? */
export const isKind = (error: unknown, kind: DomainError['kind']): error is DomainError =>
  error instanceof DomainError && error.kind === kind;
