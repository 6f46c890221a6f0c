import { createHmac } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): the signed content is "<webhook-id>.<webhook-timestamp>.<body>",
// signed with HMAC-SHA256; a secret "whsec_<base64>" is the base64 of the key, any other secret is the key itself.

export function secretBytes(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** The value of the webhook-signature header: "v1,<base64 signature>". */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
