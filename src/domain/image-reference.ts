// The grammar of a container image reference, after the distribution project's reference package:
// [host[:port]/]path[:tag][@sha256:digest], the path lowercase.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]{1,5})?$`);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

export const IMAGE_REFERENCE_MAX_LENGTH = 1024;

/** Why `reference` is not a valid image reference, or undefined when it is one. */
export function imageReferenceProblem(reference: string): string | undefined {
  if (reference.length === 0) return 'must not be empty';
  let rest = reference;
  const at = rest.indexOf('@');
  if (at >= 0) {
    if (!DIGEST.test(rest.slice(at + 1))) return 'the digest must be "sha256:" followed by 64 lowercase hex digits';
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    const tag = rest.slice(colon + 1);
    if (tag.length > 128) return 'the tag must be at most 128 characters';
    if (!TAG.test(tag)) return 'the tag may hold only letters, digits, "_", "." and "-", and must not start with "." or "-"';
    rest = rest.slice(0, colon);
  }
  const components = rest.split('/');
  const first = components[0] ?? '';
  if (components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    if (!HOST.test(first)) return `"${first}" is not a valid registry host[:port]`;
    components.shift();
  }
  for (const component of components) {
    if (PATH_COMPONENT.test(component)) continue;
    if (PATH_COMPONENT.test(component.toLowerCase())) return 'repository names must be lowercase';
    if (component === '') return 'the repository path must not have an empty component';
    return `"${component}" is not a valid repository name component (lowercase letters, digits and single separators . _ __ -)`;
  }
  return undefined;
}
