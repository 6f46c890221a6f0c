// Idempotency-Key (as in the IETF draft): a retry with the same key and request gets the first response again.

/** How long a response to an Idempotency-Key is kept for retries. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The response to a request made with an Idempotency-Key, kept to answer its retries byte for byte. */
export interface StoredResponse {
  /** Identifies the request (method, route, parameters, body): the same key with another request is refused. */
  requestHash: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}
