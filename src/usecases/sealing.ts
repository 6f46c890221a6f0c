import { Keyring, SealError } from '../sealing/keyring.ts';
import { KEY_CHECK, SEALED_COLUMNS, type SealedColumn, sealedContext } from '../store/sealed.ts';
import type { Store } from '../store/store.ts';

// The keys that seal values at rest: the check at start that a process holds the right one, and rotation.

/** The process holds no key that opens the secrets already in the database: it must not start, nor seal new ones. */
export class SealingKeyMismatch extends Error {
  override name = 'SecretsKeyMismatch';
}

const CHECK_TEXT = 'podplate secrets key check';
const BATCH = 200;

/** What a rotation did to one sealed column. */
export interface RotatedColumn {
  what: string;
  /** Sealed again under the current key. */
  resealed: number;
  /** Already under the current key. */
  current: number;
  /** Keys (row ids) whose value no key of the keyring opens: left as they are. */
  unreadable: string[];
}

/** The keys that seal secrets at rest: the check that a process holds the right one, and rotation. */
export class Sealing {
  private readonly store: Store;
  private readonly keyring: () => Keyring;

  constructor(store: Store, keyring: () => Keyring) {
    this.store = store;
    this.keyring = keyring;
  }

  /**
   * Fails with SecretsKeyMismatch unless this process's keys open what the database's secrets were sealed with. The
   * first process seals a known text; every later one must open it (with SECRETS_KEY or SECRETS_KEY_PREVIOUS), so
   * processes with different keys can't both seal secrets that only one of them could read.
   */
  async checkKey(): Promise<void> {
    const keyring = this.keyring();
    const context = sealedContext(KEY_CHECK, 'check');
    const sealed = await this.store.transaction(async (tx) => {
      const found = await tx.sealed.keyCheck();
      if (found !== undefined) return found;
      await tx.sealed.insertKeyCheck(keyring.seal(CHECK_TEXT, context));
      return (await tx.sealed.keyCheck()) as string;
    });
    try {
      if (keyring.open(sealed, context) === CHECK_TEXT) return;
    } catch (error) {
      if (!(error instanceof SealError)) throw error;
    }
    const sealer = Keyring.sealerOf(sealed) ?? 'unknown';
    throw new SealingKeyMismatch(
      `the secrets in this database were sealed under key ${sealer}, but this process has ${keyring.keyIds.join(' and ')} ` +
        `(SECRETS_KEY${keyring.keyIds.length > 1 ? ' and SECRETS_KEY_PREVIOUS' : ''}): set SECRETS_KEY to the key every other ` +
        'process uses (during a rotation, the old one in SECRETS_KEY_PREVIOUS).',
    );
  }

  /**
   * Seals every secret again under the current key: each value of each column in SEALED_COLUMNS that another key sealed
   * is opened (with SECRETS_KEY_PREVIOUS) and sealed with SECRETS_KEY, a batch per transaction. A value changed or
   * deleted meanwhile is left to its writer. Values that no key opens are reported, not touched.
   */
  async rotate(onProgress: (column: RotatedColumn) => void = () => {}): Promise<RotatedColumn[]> {
    const report: RotatedColumn[] = [];
    for (const column of SEALED_COLUMNS) report.push(await this.rotateColumn(column, onProgress));
    return report;
  }

  private async rotateColumn(column: SealedColumn, onProgress: (column: RotatedColumn) => void): Promise<RotatedColumn> {
    const keyring = this.keyring();
    const done: RotatedColumn = { what: column.what, resealed: 0, current: 0, unreadable: [] };
    let after: string | undefined;
    for (;;) {
      const batch = await this.store.sealed.page(column, BATCH, after);
      if (batch.length === 0) break;
      after = batch[batch.length - 1]?.key;
      await this.store.transaction(async (tx) => {
        for (const { key, sealed } of batch) {
          if (keyring.sealedByCurrent(sealed)) {
            done.current++;
            continue;
          }
          let plaintext: string;
          try {
            plaintext = keyring.open(sealed, sealedContext(column, key));
          } catch (error) {
            if (!(error instanceof SealError)) throw error;
            done.unreadable.push(key);
            continue;
          }
          if (await tx.sealed.replace(column, key, sealed, keyring.seal(plaintext, sealedContext(column, key)))) done.resealed++;
        }
      });
      onProgress(done);
    }
    return done;
  }
}
