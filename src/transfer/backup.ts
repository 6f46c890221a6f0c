import { renameSync, rmSync } from 'node:fs';
import type { Store } from '../store/store.ts';
import { OperationRefused } from './export.ts';

// `podplate backup`: a SQLite install copied while it serves, through SQLite's online backup API.

/** Copies the install to `file` (written whole under another name, then renamed); the seconds it took. */
export async function backupInstall(store: Store, file: string): Promise<number> {
  if (store.dialect.name !== 'sqlite') {
    throw new OperationRefused('backup copies a SQLite install; for PostgreSQL use pg_dump (see docs/operations.md)');
  }
  const started = performance.now();
  const partial = `${file}.partial`;
  try {
    await store.backup(partial);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  return (performance.now() - started) / 1000;
}
