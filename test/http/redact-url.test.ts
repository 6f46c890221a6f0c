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
const values = ['1', 'true', 'pytorch', KEY, KEY.replace('_', '%5F'), `Bearer%20${KEY}`, '%FF', 'a+b'];
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
  const url = fc.tuple(fc.constantFrom('/v1/templates', `/v1/templates/${KEY}`, '/v1/endpoints/ep_1'), fc.array(pair, { maxLength: 4 }));
  fc.assert(
    fc.property(url, ([path, pairs]) => {
      const raw = pairs.length === 0 ? path : `${path}?${pairs.map(([n, v]) => `${n}=${v}`).join('&')}`;
      const logged = redactUrl(raw);
      assert.doesNotMatch(logged, /pp(_|%5f)(?!\[redacted\])/i, raw);
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
