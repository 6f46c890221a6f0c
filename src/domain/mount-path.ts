/** Why `path` can't be a volume mount path, or undefined when it can. */
export function mountPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path (start with "/")';
  if (/^\/+$/.test(path)) return 'must not be the root directory "/"';
  if (path.split('/').includes('..')) return 'must not contain a ".." segment';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain control characters';
  return undefined;
}
