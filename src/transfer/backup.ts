import { writePrivately } from '../private-files.ts';
import type { Store } from '../store/store.ts';
import { OperationRefused } from './export.ts';

// `podplate backup`: a SQLite install copied while it serves, through SQLite's online backup API.

/**
 * Copies the install to `file`, private to the user making it (0600, as are the copy's own temporary files), written
 * whole under another name and put in place; the seconds it took.
 */
export async function backupInstall(store: Store, file: string): Promise<number> {
  if (store.dialect.name !== 'sqlite') {
    throw new OperationRefused('backup copies a SQLite install; for PostgreSQL use pg_dump (see docs/operations.md)');
  }
  const started = performance.now();
  await writePrivately(
    file,
    async ({ path }) => {
      // SQLite makes the copy's journal beside it as it writes: under this mask, private too.
      const mask = process.umask(0o077);
      try {
        await store.backup(path);
      } finally {
        process.umask(mask);
      }
    },
    { what: 'back up to' },
  );
  return (performance.now() - started) / 1000;
}
