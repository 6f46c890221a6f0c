// Timestamps, as every one is kept and shown.

/** The time now, as every timestamp is kept and shown: ISO 8601 in UTC, to the millisecond. */
export const now = (): string => new Date().toISOString();
