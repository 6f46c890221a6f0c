import { randomBytes } from 'node:crypto';
import { closeSync, constants, createWriteStream, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

// Files that hold what only their owner may read — an export, a backup, a key, a saved login — are made 0600 under a
// temporary name of their own, created exclusively and never through a link (so no other user can plant it, or
// point it at a file of theirs), and put in place whole, never over a file that is there. A file Podplate reads that
// another user owns is refused: what it holds would decide what Podplate does.

/** What went wrong with a file, in one line that names it. */
export class FileError extends Error {
  override name = 'FileError';
}

/** One line for a failed file operation: what, where, and why in words. */
export function fileProblem(error: unknown, what: string, path: string): FileError {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return new FileError(`cannot ${what} ${path}: the folder ${dirname(path)} does not exist`);
  if (code === 'EACCES' || code === 'EPERM') return new FileError(`cannot ${what} ${path}: permission denied`);
  if (code === 'EEXIST') return new FileError(`cannot ${what} ${path}: it exists, and is never overwritten`);
  if (code === 'ENOSPC') return new FileError(`cannot ${what} ${path}: the disk is full`);
  if (code === 'EISDIR') return new FileError(`cannot ${what} ${path}: it is a folder`);
  return new FileError(`cannot ${what} ${path}: ${(error as Error).message}`);
}

/** Creates a new, empty file at `path`, 0600, exclusively and not through a link; its descriptor. */
export function createPrivate(path: string): number {
  return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
}

/** A temporary name beside `path` that nobody can guess beforehand. */
export const temporaryBeside = (path: string): string => `${path}.${randomBytes(8).toString('hex')}.partial`;

/**
 * Puts the finished temporary file at `path`: by default without replacing anything there (a hard link fails if
 * `path` exists, where a rename would replace it), or, with `replace`, in its place at once (a rename).
 */
function putInPlace(temporary: string, path: string, replace: boolean): void {
  if (replace) {
    renameSync(temporary, path);
    return;
  }
  linkSync(temporary, path);
  rmSync(temporary, { force: true });
}

/**
 * Writes a private file at `path`, whole or not at all: `write` fills a temporary 0600 file (given as a stream, or
 * by its path for writers that open it themselves), which is then put in place. A failure removes it.
 */
export async function writePrivately<T>(
  path: string,
  write: (file: { stream: () => Writable; path: string }) => Promise<T>,
  { what = 'write', replace = false }: { what?: string; replace?: boolean } = {},
): Promise<T> {
  const temporary = temporaryBeside(path);
  let fd: number | undefined;
  try {
    fd = createPrivate(temporary);
  } catch (error) {
    throw fileProblem(error, what, path);
  }
  let stream: Writable | undefined;
  try {
    const result = await write({
      path: temporary,
      stream: () => {
        stream = createWriteStream('', { fd: fd as number, autoClose: true });
        fd = undefined;
        return stream;
      },
    });
    if (stream) {
      stream.end();
      await finished(stream);
    }
    putInPlace(temporary, path, replace);
    return result;
  } catch (error) {
    stream?.destroy();
    rmSync(temporary, { force: true });
    throw (error as { code?: string }).code ? fileProblem(error, what, path) : error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Refuses a file (or folder) that another user owns: `what` names it in the one line that says so. */
export function refuseOthers(path: string, what: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat && stat.uid !== uid) {
    throw new FileError(
      `${what} ${path} belongs to another user (uid ${stat.uid}), not to the user running Podplate (uid ${uid}): run Podplate as its owner, or chown it`,
    );
  }
}
