import { Type } from '@sinclair/typebox';
import { STORABLE_TEXT } from './text.ts';

// A template's image check: what its registry said of the image (digest, platforms, size, CUDA), and the verdict.

export const IMAGE_CHECK_STATUSES = ['pending', 'verified', 'failed', 'unreachable', 'off'] as const;
export type ImageCheckStatus = (typeof IMAGE_CHECK_STATUSES)[number];

/** The platform a Pod or worker runs: an image without it can't start. */
export const REQUIRED_PLATFORM = 'linux/amd64';

/** Whether an image of these platforms runs on REQUIRED_PLATFORM (of any variant, `linux/amd64/v3` too). */
export const runsHere = (platforms: readonly string[]): boolean =>
  platforms.some((p) => p === REQUIRED_PLATFORM || p.startsWith(`${REQUIRED_PLATFORM}/`));

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const ImageCheckSchema = Type.Object(
  {
    status: Type.Unsafe<ImageCheckStatus>({
      type: 'string',
      enum: [...IMAGE_CHECK_STATUSES],
      description:
        '`pending`: a check is due or under way; `verified`: the registry serves the image for linux/amd64 and it fits the ' +
        'container disk; `failed`: it does not, and `reason` says why; `unreachable`: the registry did not answer (retried ' +
        'with backoff); `off`: image checks are turned off on this install.',
    }),
    checkedAt: nullable(Type.String({ format: 'date-time' }), 'When the last check ended; null before the first.'),
    digest: nullable(
      Type.String({ pattern: '^sha256:[a-f0-9]{64}$' }),
      'The digest the image is pinned to at this revision (of its index when it has several platforms): launchers start `name@digest`.',
    ),
    platforms: Type.Array(Type.String({ pattern: STORABLE_TEXT }), {
      maxItems: 64,
      description: 'The platforms the image is built for, e.g. `linux/amd64`.',
    }),
    sizeBytes: nullable(Type.Integer({ minimum: 0 }), "The compressed size of the linux/amd64 image's layers, in bytes."),
    cudaVersion: nullable(
      Type.String({ maxLength: 64, pattern: STORABLE_TEXT }),
      'The CUDA version the image declares (`CUDA_VERSION` or `com.nvidia.cuda.version`).',
    ),
    reason: nullable(
      Type.String({ maxLength: 1024, pattern: STORABLE_TEXT }),
      'Why the check failed or the registry was unreachable, for a person to act on.',
    ),
  },
  {
    title: 'ImageCheck',
    additionalProperties: false,
    description:
      "What the image's registry said of it: read-only, set by the server after each change of `imageName` or " +
      '`containerRegistryAuthId`, and on demand.',
  },
);

export interface ImageCheck {
  status: ImageCheckStatus;
  checkedAt: string | null;
  digest: string | null;
  platforms: string[];
  sizeBytes: number | null;
  cudaVersion: string | null;
  reason: string | null;
}

/** The check of an image not yet checked: pending, or off when checks are off; `digest` pinned already, if any. */
export const uncheckedImage = (enabled: boolean, digest: string | null = null): ImageCheck => ({
  status: enabled ? 'pending' : 'off',
  checkedAt: null,
  digest,
  platforms: [],
  sizeBytes: null,
  cudaVersion: null,
  reason: null,
});

/** What a registry serves under a reference: an image (or an index of them) that exists. */
export interface ImageFacts {
  digest: string;
  platforms: string[];
  /** The compressed size of the linux/amd64 image's layers; null when there is no such image. */
  sizeBytes: number | null;
  cudaVersion: string | null;
}

/** Why a registry gave no image, as the check tells it. */
export type RegistryFailure =
  | { kind: 'not-found' }
  /** The registry wants credentials and the template names none (`given` false), or refused those given. */
  | { kind: 'denied'; given: boolean }
  /** The registry or its answer is not one the check may use (an address refused, a manifest too large …). */
  | { kind: 'refused'; reason: string }
  | { kind: 'unreachable'; reason: string };

/** A gigabyte as containerDiskInGb counts it. */
export const GB = 1024 ** 3;

const gigabytes = (bytes: number) => `${(bytes / GB).toFixed(1)} GB`;

/** How the reason for refused credentials starts: those who may not know the auth's name see it without (see template.ts). */
export const CREDENTIALS_REFUSED = 'The registry refused the credentials of registry auth';
export const CREDENTIALS_REFUSED_UNNAMED = "The registry refused the credentials of the template's registry auth.";

/** The verdict on an image the registry served: verified, or failed with the reason. */
export function judge(facts: ImageFacts, containerDiskInGb: number, checkedAt: string): ImageCheck {
  const base = { checkedAt, ...facts };
  if (!runsHere(facts.platforms)) {
    const has = facts.platforms.length > 0 ? ` (it has ${facts.platforms.join(', ')})` : '';
    return {
      ...base,
      status: 'failed',
      reason: `The image has no ${REQUIRED_PLATFORM} image${has}: Pods and workers run on ${REQUIRED_PLATFORM}.`,
    };
  }
  if (facts.sizeBytes !== null && facts.sizeBytes > containerDiskInGb * GB) {
    return {
      ...base,
      status: 'failed',
      reason:
        `The image's compressed layers (${gigabytes(facts.sizeBytes)}) exceed containerDiskInGb (${containerDiskInGb} GB): ` +
        'raise containerDiskInGb or use a smaller image.',
    };
  }
  return { ...base, status: 'verified', reason: null };
}

/** The check of an image its registry did not give: failed with a reason to act on, or unreachable. */
export function failedCheck(
  failure: RegistryFailure,
  image: { imageName: string; registryAuthName: string | null; digest: string | null },
  checkedAt: string,
): ImageCheck {
  const check = { ...uncheckedImage(true, image.digest), checkedAt };
  switch (failure.kind) {
    case 'not-found':
      return {
        ...check,
        status: 'failed',
        reason: image.digest
          ? `The registry no longer has ${image.imageName} at its pinned digest ${image.digest}.`
          : `The registry has no image ${image.imageName}: no such repository or tag.`,
      };
    case 'denied':
      return {
        ...check,
        status: 'failed',
        reason:
          image.registryAuthName === null
            ? 'The registry asked for credentials and the template names no registry auth: set containerRegistryAuthId.'
            : `${CREDENTIALS_REFUSED} ${JSON.stringify(image.registryAuthName)}: check its username and password.`,
      };
    case 'refused':
      return { ...check, status: 'failed', reason: failure.reason };
    case 'unreachable':
      return { ...check, status: 'unreachable', reason: failure.reason };
    default:
      return failure satisfies never;
  }
}

const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}]/gu;

/**
 * Text a registry wrote, as the check keeps it: control and format characters (NUL, bidi overrides) and lone
 * surrogates dropped, at most `most` characters. A registry is not trusted to send text a terminal or a database takes as it is.
 */
export function registryText(text: string, most: number): string {
  return [...text.replace(UNPRINTABLE, '')].slice(0, most).join('');
}

/** An image's CUDA version from its config: `CUDA_VERSION` in its env, else the `com.nvidia.cuda.version` label. */
export function cudaVersionOf(config: { Env?: unknown; Labels?: unknown } | undefined): string | null {
  const env = Array.isArray(config?.Env) ? config.Env : [];
  for (const entry of env) {
    if (typeof entry === 'string' && entry.startsWith('CUDA_VERSION='))
      return registryText(entry.slice('CUDA_VERSION='.length), 64) || null;
  }
  const labels = config?.Labels;
  const label = labels && typeof labels === 'object' ? (labels as Record<string, unknown>)['com.nvidia.cuda.version'] : undefined;
  return typeof label === 'string' ? registryText(label, 64) || null : null;
}

/** The image of a template, as far as its check goes. */
export interface CheckedImage {
  imageName: string;
  containerRegistryAuthId: string;
  containerDiskInGb: number;
}

/** What a change makes of a template's image check: its new check, the new revision's pin, and whether to check again. */
export interface ImageAfterChange {
  imageCheck: ImageCheck;
  pin: string | null;
  /** A check is due: the image, its credentials or its pin changed. */
  recheck: boolean;
  /** The pin's change, for the revision's diff (none when only a new image's pin is not known yet). */
  digestChange?: { field: 'imageDigest'; from: string | null; to: string | null };
}

/**
 * The image check after a change from `before` to `after`. `currentPin` is the pin of the revision changed;
 * `targetPin` the pin a rollback brings back (undefined for an update). A new image name is checked anew (its pin
 * from the rollback, else none until its check); new credentials or another pin are checked again; a new disk size
 * judges again what the last check found, without asking the registry; anything else keeps the check as it is.
 */
export function imageAfterChange(
  before: CheckedImage & { imageCheck: ImageCheck },
  after: CheckedImage,
  currentPin: string | null,
  targetPin: string | null | undefined,
  enabled: boolean,
): ImageAfterChange {
  const renamed = after.imageName !== before.imageName;
  const pin = targetPin !== undefined ? targetPin : renamed ? null : currentPin;
  const digestChange =
    pin !== currentPin && !(renamed && pin === null) ? { field: 'imageDigest' as const, from: currentPin, to: pin } : undefined;
  if (renamed || pin !== currentPin || after.containerRegistryAuthId !== before.containerRegistryAuthId) {
    return { imageCheck: uncheckedImage(enabled, pin), pin, recheck: true, digestChange };
  }
  const last = before.imageCheck;
  const judged = (last.status === 'verified' || last.status === 'failed') && last.digest !== null && last.platforms.length > 0;
  if (after.containerDiskInGb !== before.containerDiskInGb && judged && last.checkedAt !== null && last.digest !== null) {
    const facts = { digest: last.digest, platforms: last.platforms, sizeBytes: last.sizeBytes, cudaVersion: last.cudaVersion };
    const imageCheck = judge(facts, after.containerDiskInGb, last.checkedAt);
    const newPin = pin ?? (imageCheck.status === 'verified' ? facts.digest : null);
    return {
      imageCheck,
      pin: newPin,
      recheck: false,
      digestChange: newPin !== currentPin ? { field: 'imageDigest', from: currentPin, to: newPin } : undefined,
    };
  }
  return { imageCheck: last, pin, recheck: false };
}
