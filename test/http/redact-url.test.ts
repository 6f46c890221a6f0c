import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { redactUrl } from '../../src/http/plugins/log.ts';

// A logged URL holds no API key and no value of a secret-named query parameter, however they are spelled; the rest
// of it is kept as it came. (The logs of a real server: test/reliability/logs.test.ts.)

const KEY = 'pp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd';
const names = [
  'limit',
  'q',
  'scope',
  'includePublicTemplates',
  'api_key',
  'API%5FKEY',
  'access_token',
  'x-api-key',
  'Pass%77ord',
  'to+ken',
  'session',
];
const BODY = KEY.slice(3);
/** A key spelled with percent-escapes: only its decoded text shows it. */
const ESCAPED = [`%70p_${BODY}`, `%70%70%5f${BODY}`, `%50%50%5F${BODY}`, `pp%255f${BODY}`, `%2570p_${BODY}`];
const values = ['1', 'true', 'pytorch', KEY, KEY.replace('_', '%5F'), `Bearer%20${KEY}`, '%FF', 'a+b', '%E2%82', ...ESCAPED];
const secretName = /key|token|secret|passw|pwd|auth|credential|signature|session|bearer|jwt/i;
const decoded = (s: string) => {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
};

test('a logged URL keeps no key and no secret-named value, and the rest as it came', () => {
  const pair = fc.tuple(fc.constantFrom(...names), fc.constantFrom(...values));
  const url = fc.tuple(
    fc.constantFrom(
      '/v1/templates',
      `/v1/templates/${KEY}`,
      '/v1/endpoints/ep_1',
      `/v1/templates/${ESCAPED[0]}`,
      `/v1/templates/${ESCAPED[3]}`,
    ),
    fc.array(pair, { maxLength: 4 }),
  );
  fc.assert(
    fc.property(url, ([path, pairs]) => {
      const raw = pairs.length === 0 ? path : `${path}?${pairs.map(([n, v]) => `${n}=${v}`).join('&')}`;
      const logged = redactUrl(raw);
      assert.doesNotMatch(logged, /pp(_|%5f)(?!\[redacted\])/i, raw);
      // However the key was spelled, no decoding of the line shows it.
      let unescaped = logged;
      for (let i = 0; i < 3; i++) unescaped = unescaped.replace(/%([0-9a-f]{2})/gi, (_, h) => String.fromCharCode(Number.parseInt(h, 16)));
      assert.ok(!unescaped.includes(BODY), `${raw} logged as ${logged}`);
      // Otherwise the URL is kept as it came, but for the secrets.
      if (ESCAPED.some((e) => raw.includes(e))) return;
      const [loggedPath = '', query] = logged.split('?');
      assert.equal(loggedPath, path.replace(KEY, 'pp_[redacted]'));
      for (const [i, kept] of (query?.split('&') ?? []).entries()) {
        const [name, value] = pairs[i] as [string, string];
        if (secretName.test(decoded(name))) assert.equal(kept, `${name}=[redacted]`, raw);
        else assert.equal(kept, `${name}=${value.replace(/pp(_|%5f)[^&]*/i, 'pp_[redacted]')}`, raw);
      }
    }),
    { numRuns: 2_000 },
  );
  // Nothing to redact: the URL itself, as it came.
  const plain = '/v1/templates/cat0000000099999?includePublicTemplates=true';
  assert.equal(redactUrl(plain), plain);
});
