// Volume mount paths: what makes one acceptable.

/**
 * Why `path` can't be a volume mount path, or undefined when it can. A mount path is a normalised absolute path
 * below the root: "/" then one or more segments joined by "/", none empty (no "//", no "/" at the end), none "." or
 * "..". So each directory has one spelling, and no path can mean the root or climb out of where it points.
 */
export function mountPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path (start with "/")';
  const segments = path.slice(1).split('/');
  // "/", "//", "/." and "/./" all name the root.
  if (segments.every((s) => s === '' || s === '.')) return 'must not be the root directory "/"';
  if (segments.includes('..')) return 'must not contain a ".." segment';
  if (segments.includes('')) return 'must not contain an empty segment ("//", or a "/" at the end)';
  if (segments.includes('.')) return 'must not contain a "." segment';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain control characters';
  // Refused for every string by the HTTP layer first; stated here too, so that the published pattern says it.
  if (/[\ud800-\udfff]/u.test(path)) return 'must not contain a lone UTF-16 surrogate';
  return undefined;
}

/**
 * The same rule as one regular expression without lookaround (so that any JSON Schema validator runs it), for the
 * OpenAPI document: one or more "/" + segment, where a segment starts with a character other than "." or "/", or is
 * "." then such a character, or ".." then at least one more character; no control character or lone UTF-16 surrogate
 * anywhere (read with the "u" flag, as JSON Schema asks: a surrogate pair is one character there).
 * test/domain/mount-path.test.ts and test/http/published-patterns.test.ts show it accepts exactly what
 * mountPathProblem accepts.
 */
export const MOUNT_PATH_PATTERN = (() => {
  const char = '[^/\\x00-\\x1f\\x7f\\ud800-\\udfff]';
  const notDot = '[^/.\\x00-\\x1f\\x7f\\ud800-\\udfff]';
  return `^(?:/(?:${notDot}${char}*|\\.${notDot}${char}*|\\.\\.${char}+))+$`;
})();
