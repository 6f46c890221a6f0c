import { createHmac } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): the signed content is "<webhook-id>.<webhook-timestamp>.<body>",
// signed with HMAC-SHA256; a secret "whsec_<base64>" is the base64 of the key, any other secret is the key itself.

/** The fewest bytes a signing key may have: a shorter one (say "whsec_" and text that is not base64) is guessable. */
export const SECRET_MIN_BYTES = 16;

/** The key a secret stands for; throws, naming the rule, when it is not one (never repeating the secret). */
export function secretBytes(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) {
    const key = Buffer.from(secret, 'utf8');
    if (key.length < SECRET_MIN_BYTES) throw new Error(`must be at least ${SECRET_MIN_BYTES} bytes`);
    return key;
  }
  const encoded = secret.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new Error('is "whsec_" followed by text that is not base64');
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < SECRET_MIN_BYTES)
    throw new Error(`is "whsec_" and a key of ${key.length} bytes; it must be at least ${SECRET_MIN_BYTES}`);
  return key;
}

/** The value of the webhook-signature header: "v1,<base64 signature>". */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
