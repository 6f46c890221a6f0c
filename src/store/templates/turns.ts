import { RateLimited } from '../../domain/errors.ts';

// SQLite reads on the event loop, and a list page holds it for a millisecond or more (a walked search, about 20 ms):
// pages take turns, one at a time, each after the loop has served what came meanwhile, so that a crowd of them does
// not hold every cheap read behind all of them; and the accounts take turns (round robin), so that one account's
// crowd of pages does not hold another's page behind all of them. An account has at most WAITING pages waiting: a
// 429 beyond. (p-limit served the pages first come, first served: 40 walked searches of one account held another's
// page of 20 for 0.85 s; no queue library at hand serves keys in turn.)

/** The pages an account may have waiting for their turn. */
export const WAITING = 16;

export class Turns {
  /** Each account's pages waiting, the accounts in the order they are served (a Map keeps the order keys came in). */
  private readonly waiting = new Map<string, (() => void)[]>();
  private busy = false;

  /** Runs `work` in `account`'s turn. */
  async take<T>(account: string, work: () => Promise<T>): Promise<T> {
    const queue = this.waiting.get(account) ?? [];
    if (queue.length >= WAITING) {
      throw new RateLimited(`This account already has ${WAITING} list pages waiting to be read; try again in a moment.`, 1);
    }
    await new Promise<void>((resolve) => {
      queue.push(resolve);
      this.waiting.set(account, queue);
      this.next();
    });
    try {
      await new Promise(setImmediate);
      return await work();
    } finally {
      this.busy = false;
      this.next();
    }
  }

  private next(): void {
    if (this.busy) return;
    const first = this.waiting.entries().next();
    if (first.done) return;
    const [account, queue] = first.value;
    const resolve = queue.shift() as () => void;
    // The account goes to the end of the line with what it has left; a page it sends later joins the line's end.
    this.waiting.delete(account);
    if (queue.length > 0) this.waiting.set(account, queue);
    this.busy = true;
    resolve();
  }
}
