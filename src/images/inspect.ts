import { cudaVersionOf, type ImageFacts, registryText, runsHere } from '../domain/image-check.ts';
import { DOCKER_HUB, type ImageLocation } from '../domain/image-reference.ts';
import type { Reacher } from './guard.ts';
import { type Credentials, type Fetched, RegistryError, RegistrySession } from './registry.ts';

// What the registry serves under an image reference: its digest, its platforms, the compressed size of its
// linux/amd64 layers and its CUDA version, read from the manifest (or index), the linux/amd64 manifest and its config.

/** Docker Hub's API is not at docker.io itself. */
const DOCKER_HUB_API = 'registry-1.docker.io';
/** Platforms an index may list that are not images (attestations and signatures). */
const NOT_A_PLATFORM = 'unknown';
const MOST_PLATFORMS = 64;

export interface InspectOptions {
  reacher: Reacher;
  requestTimeoutMs: number;
  /** Ends the whole inspection. */
  deadline?: AbortSignal;
}

/** The API root of an image's registry: https, or http for a host an operator listed. */
export function registryOrigin(registry: string, reacher: Reacher): string {
  const host = registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
  return `${reacher.scheme(host)}//${host}`;
}

interface Descriptor {
  digest: string;
  size: number;
  platform?: { os?: unknown; architecture?: unknown; variant?: unknown };
}

const DIGEST = /^sha256:[a-f0-9]{64}$/;

function descriptor(value: unknown): Descriptor | undefined {
  const d = value as Partial<Descriptor> | null;
  if (!d || typeof d !== 'object' || typeof d.digest !== 'string' || !DIGEST.test(d.digest)) return undefined;
  if (typeof d.size !== 'number' || !Number.isSafeInteger(d.size) || d.size < 0) return undefined;
  return d as Descriptor;
}

const platformName = (p: { os?: unknown; architecture?: unknown; variant?: unknown }): string | undefined =>
  typeof p.os === 'string' && typeof p.architecture === 'string'
    ? registryText(
        [p.os, p.architecture, typeof p.variant === 'string' && p.variant !== '' ? p.variant : undefined].filter(Boolean).join('/'),
        64,
      )
    : undefined;

/**
 * Reads the image `location` names (at `reference`, a tag or a digest) with `credentials`: its facts, or a RegistryError
 * saying why the registry gave none.
 */
export async function inspectImage(
  location: ImageLocation,
  reference: string,
  credentials: Credentials | null,
  options: InspectOptions,
): Promise<ImageFacts> {
  const session = new RegistrySession({
    reacher: options.reacher,
    requestTimeoutMs: options.requestTimeoutMs,
    deadline: options.deadline,
    origin: registryOrigin(location.registry, options.reacher),
    repository: location.repository,
    credentials,
  });
  const top = await session.manifest(reference);
  if (DIGEST.test(reference) && top.digest !== reference) throw mismatch(reference);
  const json = top.json as { manifests?: unknown; layers?: unknown; config?: unknown };
  let image: Fetched = top;
  let platforms: string[] | undefined;
  if (Array.isArray(json.manifests)) {
    const entries = json.manifests.map(descriptor);
    if (entries.some((e) => e === undefined)) throw notAnImage('an index whose entries are not valid descriptors');
    const listed = (entries as Descriptor[]).filter((e) => e.platform && e.platform.os !== NOT_A_PLATFORM);
    platforms = [...new Set(listed.map((e) => e.platform && platformName(e.platform)).filter((p) => p !== undefined))].slice(
      0,
      MOST_PLATFORMS,
    );
    const amd64 = listed.find((e) => e.platform?.os === 'linux' && e.platform.architecture === 'amd64');
    if (!amd64) return { digest: top.digest, platforms, sizeBytes: null, cudaVersion: null };
    image = await session.manifest(amd64.digest);
    if (image.digest !== amd64.digest) throw mismatch(amd64.digest);
  }
  const manifest = image.json as { layers?: unknown; config?: unknown };
  const config = descriptor(manifest.config);
  const layers = Array.isArray(manifest.layers) ? manifest.layers.map(descriptor) : undefined;
  if (!config || !layers || layers.some((l) => l === undefined)) throw notAnImage('a manifest that is not an image manifest');
  const blob = await session.blob(config.digest);
  if (blob.digest !== config.digest) throw mismatch(config.digest);
  const body = blob.json as {
    os?: unknown;
    architecture?: unknown;
    variant?: unknown;
    config?: { Env?: unknown; Labels?: unknown };
  } | null;
  const own = body && typeof body === 'object' ? platformName(body) : undefined;
  platforms ??= own ? [own] : [];
  const amd64 = runsHere(platforms);
  const sizeBytes = amd64 ? (layers as Descriptor[]).reduce((sum, layer) => sum + layer.size, 0) : null;
  return { digest: top.digest, platforms, sizeBytes, cudaVersion: amd64 ? cudaVersionOf(body?.config) : null };
}

const mismatch = (digest: string) => new RegistryError('refused', `The registry sent content whose digest is not ${digest}, as asked.`);
const notAnImage = (what: string) => new RegistryError('refused', `The registry sent ${what}; the check reads OCI and Docker v2 images.`);
