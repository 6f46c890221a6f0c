// The transactional outbox: events written in the same transaction as the change they announce, sent afterwards.

/** An event to send, as written beside the change it announces. */
export interface OutboxEntry {
  eventId: string;
  type: string;
  /** What the event is about (a release id): how a reader finds its delivery state. */
  subjectId: string;
  /** Events with one ordering key (an endpoint) are delivered one after another, in the order written. */
  orderingKey: string;
  /** The account the event is for: delivery takes accounts in turn, and its payload counts against it. */
  accountId: string;
  payload: string;
  createdAt: string;
}

/** An event claimed for delivery. */
export interface OutboxEvent {
  seq: number;
  eventId: string;
  type: string;
  payload: string;
  /** Attempts so far, this one included. */
  attempts: number;
}

/** Events not yet delivered: how many, how many have failed at least once, and when the oldest was written. */
export interface OutboxBacklog {
  pending: number;
  failing: number;
  oldest: string | null;
}
