import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

// Secrets at rest: AES-256-GCM under a current key, with the key before it still able to open what it sealed.
// A sealed value is one line of text, `v1.<key id>.<iv>.<ciphertext and tag>` (base64url), bound to the place it is
// stored by associated data (its table, column and row): copied to another row, it does not open. The key id says
// which key sealed it, so rotation knows what to seal again. No files, no environment: the process gives the keys.

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** How a key is written: 32 bytes in base64 (or base64url), padding optional. */
const KEY_TEXT = /^[A-Za-z0-9+/_-]{43}=?$/;

export const KEY_RULE = 'must be 32 random bytes in base64 (44 characters), for example the output of `openssl rand -base64 32`';

/** A key that is not 32 bytes of base64. */
export class KeyFormatError extends Error {
  override name = 'KeyFormatError';
}

/** A sealed value that can't be opened: sealed under a key this keyring lacks, for another place, or altered. */
export class SealError extends Error {
  override name = 'SealError';
  /** The id of the key that sealed the value, when the value says. */
  readonly keyId?: string;

  constructor(
    message: string,

    keyId?: string,
  ) {
    super(message);
    this.keyId = keyId;
  }
}

/** A new random key, as SECRETS_KEY takes it. */
export const newKeyText = (): string => randomBytes(KEY_BYTES).toString('base64');

/** The 32 bytes of a key written as `KEY_TEXT`; `name` says which setting it came from. */
export function parseKey(text: string, name: string): Buffer {
  const trimmed = text.trim();
  if (!KEY_TEXT.test(trimmed)) throw new KeyFormatError(`${name} ${KEY_RULE}`);
  return Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** A short public name of a key (8 characters): its HMAC over a fixed label, which tells nothing of the key. */
export const keyIdOf = (key: Buffer): string =>
  createHmac('sha256', key).update('podplate secrets key id').digest().subarray(0, 6).toString('base64url');

const aad = (keyId: string, context: string) => Buffer.from(`${VERSION}.${keyId}|${context}`, 'utf8');

export class Keyring {
  /** The id of the key that seals. */
  readonly currentId: string;
  private readonly keys = new Map<string, Buffer>();

  /** `current` seals and opens; each of `previous` only opens. */
  constructor(current: Buffer, previous: Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== KEY_BYTES) throw new KeyFormatError(`a key is ${KEY_BYTES} bytes, not ${key.length}`);
    }
    this.currentId = keyIdOf(current);
    this.keys.set(this.currentId, current);
    for (const key of previous) if (!this.keys.has(keyIdOf(key))) this.keys.set(keyIdOf(key), key);
  }

  /** A keyring from keys as SECRETS_KEY and SECRETS_KEY_PREVIOUS hold them. */
  static fromText(current: string, previous?: string): Keyring {
    return new Keyring(parseKey(current, 'SECRETS_KEY'), previous ? [parseKey(previous, 'SECRETS_KEY_PREVIOUS')] : []);
  }

  /** The ids of every key that opens, the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** `plaintext` sealed under the current key, bound to `context` (where it will be stored). */
  seal(plaintext: string, context: string): string {
    const key = this.keys.get(this.currentId) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.currentId, context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${this.currentId}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The plaintext of a value sealed for `context` by one of this keyring's keys; a SealError otherwise. */
  open(sealed: string, context: string): string {
    const [version, keyId, iv, body, ...rest] = sealed.split('.');
    if (version !== VERSION || !keyId || !iv || body === undefined || rest.length > 0) throw new SealError('is not a sealed value');
    const key = this.keys.get(keyId);
    if (!key) throw new SealError(`was sealed under key ${keyId}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`, keyId);
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < TAG_BYTES) throw new SealError('is not a sealed value', keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(keyId, context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError(`does not open under key ${keyId}: it was sealed for another place, or altered`, keyId);
    }
  }

  /** The id of the key that sealed a value, as the value says. */
  static sealerOf(sealed: string): string | undefined {
    const [version, keyId] = sealed.split('.', 2);
    return version === VERSION ? keyId : undefined;
  }

  /** Whether the current key sealed this value (rotation leaves such values as they are). */
  sealedByCurrent(sealed: string): boolean {
    return Keyring.sealerOf(sealed) === this.currentId;
  }
}
