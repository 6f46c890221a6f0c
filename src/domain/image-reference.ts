// The grammar of a container image reference, after the distribution project's reference package:
// [host[:port]/]path[:tag][@sha256:digest], the path lowercase.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const PORT = ':[0-9]{1,5}';
const PATH_COMPONENT_SOURCE = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG_SOURCE = '[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}';
const DIGEST_SOURCE = 'sha256:[a-f0-9]{64}';

const HOST = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?:${PORT})?$`);
const PATH_COMPONENT = new RegExp(`^${PATH_COMPONENT_SOURCE}$`);
const TAG = new RegExp(`^${TAG_SOURCE}$`);
const DIGEST = new RegExp(`^${DIGEST_SOURCE}$`);

export const IMAGE_REFERENCE_MAX_LENGTH = 1024;

/**
 * The same grammar as one regular expression, for the OpenAPI document: any JSON Schema validator can check it.
 * A first component is a registry host only when it has a "." or a ":" or is "localhost" (as Docker reads it), so
 * a host here needs one of them, and a first path component followed by more has no ".".
 * test/domain/image-reference.test.ts shows it accepts exactly what imageReferenceProblem accepts.
 */
export const IMAGE_REFERENCE_PATTERN = (() => {
  const host =
    `(?:(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})+|\\[[a-fA-F0-9]*:[a-fA-F0-9:]*\\]|localhost)(?:${PORT})?` +
    `|(?:${DOMAIN_COMPONENT}|\\[[a-fA-F0-9]+\\])${PORT})`;
  const undotted = '[a-z0-9]+(?:(?:_|__|-+)[a-z0-9]+)*';
  const path = `(?:${host}/(?:${PATH_COMPONENT_SOURCE}/)*|${undotted}/(?:${PATH_COMPONENT_SOURCE}/)*)?${PATH_COMPONENT_SOURCE}`;
  return `^${path}(?::${TAG_SOURCE})?(?:@${DIGEST_SOURCE})?$`;
})();

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

/** Where an image is: its registry host[:port], its repository there, and the tag or digest it names. */
export interface ImageLocation {
  registry: string;
  repository: string;
  tag: string;
  digest: string | null;
}

/** Docker Hub's name, however a reference spells it. */
export const DOCKER_HUB = 'docker.io';

/**
 * A valid reference's location, as Docker reads it: no registry host is Docker Hub (`docker.io`), where a one-component
 * repository is an official image (`busybox` is `docker.io/library/busybox`); no tag is `latest`.
 */
export function imageLocation(reference: string): ImageLocation {
  let rest = reference;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag = 'latest';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const components = rest.split('/');
  const first = components[0] ?? '';
  let registry = DOCKER_HUB;
  if (components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    registry = first === 'index.docker.io' ? DOCKER_HUB : first;
    components.shift();
  }
  if (registry === DOCKER_HUB && components.length === 1) components.unshift('library');
  return { registry, repository: components.join('/'), tag, digest };
}
