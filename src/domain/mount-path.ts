/** Why `path` can't be a volume mount path, or undefined when it can. */
export function mountPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path (start with "/")';
  if (/^\/+$/.test(path)) return 'must not be the root directory "/"';
  if (path.split('/').includes('..')) return 'must not contain a ".." segment';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain control characters';
  return undefined;
}

/**
 * The same rule as one regular expression, for the OpenAPI document: slashes and segments, at least one segment
 * that is not empty, none that is "..", no control character. test/domain/mount-path.test.ts shows it accepts
 * exactly what mountPathProblem accepts.
 */
export const MOUNT_PATH_PATTERN = (() => {
  const char = '[^/\\x00-\\x1f\\x7f]';
  const notDot = '[^./\\x00-\\x1f\\x7f]';
  // A segment that is not empty and not "..": it starts with another character, or is ".", ".x…" or "..x…".
  const segment = `(?:${notDot}${char}*|\\.|\\.${notDot}${char}*|\\.\\.${char}+)`;
  return `^/+${segment}(?:/+${segment})*/*$`;
})();
