// npm run bench [-- --quick | --smoke]: what each mode runs, and for how long.

export const mode = process.argv.includes('--smoke') ? 'smoke' : process.argv.includes('--quick') ? 'quick' : 'full';
export const SETTINGS = {
  smoke: {
    duration: 1,
    warmup: 0.5,
    /** Seconds of load a freshly started server gets before its first scenario (see run.ts). */
    settle: 0.5,
    large: 2_000,
    largeTemplates: 4,
    tenants: 2,
    transfer: 2_000,
    dialects: ['sqlite'],
    /** Delivered outbox rows present in the outbox scenario's second half, and the events each round sends. */
    delivered: 2_000,
    events: 100,
    /** Requests of each of the sparse filter's pages, timed one after another. */
    pageTimings: 10,
  },
  quick: {
    duration: 4,
    warmup: 1,
    settle: 5,
    large: 100_000,
    largeTemplates: 40,
    tenants: 10,
    transfer: 100_000,
    dialects: ['sqlite', 'postgres'],
    delivered: 100_000,
    events: 1_000,
    pageTimings: 30,
  },
  full: {
    duration: 10,
    warmup: 2,
    settle: 5,
    large: 1_000_000,
    largeTemplates: 200,
    tenants: 10,
    transfer: 1_000_000,
    dialects: ['sqlite', 'postgres'],
    delivered: 1_000_000,
    events: 2_000,
    pageTimings: 50,
  },
}[mode];
export const CONNECTIONS = 50;
export const SMALL = 1_000;
/** Distinct templates read by the wide GET: more than the default read cache holds (about 37,000 of the sample). */
export const WIDE = 50_000;
