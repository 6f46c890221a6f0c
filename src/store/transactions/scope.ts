import { unavailable } from '../../domain/errors.ts';

// Transaction scopes: where the root store may and may not be used, checked at run time.

/**
 * Where a transaction is open. A transaction is a value handed to the code that runs in it; that code must use it
 * and nothing else. On SQLite, a call to the root store from inside a transaction would wait for the connection
 * the transaction holds, for ever; on PostgreSQL it would run outside the transaction, unseen. So such a call
 * fails at once instead.
 *
 * How a call is known to come from inside a transaction: the transaction's work runs under a function named after
 * its scope, and V8's async stack traces keep that function on the stack of everything the work awaits, however
 * deep (await, return, Promise.all, then). The stack is read only while some transaction of the store is open,
 * so reads on an idle database pay nothing. (AsyncLocalStorage would also follow timers, but on Node 20 it makes
 * every await in the process dearer: measured, 15 % of GET's throughput on PostgreSQL; see docs/performance.md.)
 */
export class TransactionMisuse extends Error {
  override name = 'TransactionMisuse';
}

const MARK = 'podplate transaction #';
let nextId = 1;
/** The open scopes of this process, by id. */
const opened = new Map<number, Scope>();

export class Scope {
  readonly id = nextId++;
  open = true;
  readonly owner: object;

  constructor(owner: object) {
    this.owner = owner;
    opened.set(this.id, this);
  }

  close(): void {
    this.open = false;
    opened.delete(this.id);
  }
}

/** The innermost open scope on the current (async) stack, if any. */
function currentScope(): Scope | undefined {
  if (opened.size === 0) return undefined;
  const { stackTraceLimit, prepareStackTrace } = Error;
  Error.stackTraceLimit = 64;
  Error.prepareStackTrace = (_error, sites) => {
    for (const site of sites) {
      const name = site.getFunctionName();
      if (name?.startsWith(MARK)) return opened.get(Number(name.slice(MARK.length)));
    }
    return undefined;
  };
  try {
    const holder: { stack?: Scope } = {};
    Error.captureStackTrace(holder);
    return holder.stack;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  }
}

/** Runs `work` as the work of `scope`: under a function named after it, which every await inside keeps on the stack. */
export function within<T>(scope: Scope, work: () => Promise<T>): Promise<T> {
  const name = `${MARK}${scope.id}`;
  const marker = {
    async [name]() {
      return await work();
    },
  }[name] as () => Promise<T>;
  return marker();
}

/** Throws unless the root store `owner` may be used here: not from inside one of its open transactions. */
export function assertOutside(owner: object, what: string): void {
  if (currentScope()?.owner === owner) {
    throw new TransactionMisuse(`${what} inside a transaction: use the transaction you were handed, or finish it first`);
  }
}

/** Throws unless `scope` is still open: a transaction's value can't be used once it has ended. */
export function assertOpen(scope: Scope): void {
  if (!scope.open) throw new TransactionMisuse('A transaction was used after it ended');
}

/** What a transaction that runs over its time limit fails with: the request gets a 503 and may be retried. */
export const transactionTimedOut = (limitMs: number) =>
  unavailable(`The database was held longer than ${limitMs} ms by this request, so it was stopped; retry shortly.`);

/**
 * Settles like `work`, or fails with `transactionTimedOut` once `limitMs` have passed, whichever comes first.
 * `onTimeout` runs when the limit strikes (the work itself can't be stopped; its scope is closed instead).
 */
export function withTimeLimit<T>(work: Promise<T>, limitMs: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(transactionTimedOut(limitMs));
    }, limitMs);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
