import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { KeyFormatError, Keyring, keyIdOf, newKeyText, parseKey, SealError } from '../../src/sealing/keyring.ts';

// The sealing of secrets at rest: AES-256-GCM, a key id in every sealed value, associated data binding it to its place.

const oldKey = newKeyText();
const newKey = newKeyText();
const context = 'registry_auths.password/abc';

test('a sealed value opens to its plaintext, in its place, and tells which key sealed it', () => {
  const keyring = Keyring.fromText(oldKey);
  for (const plaintext of ['p', 'pässwörd ✓ \u{1F680}', '{\n  "type": "service_account"\n}\n', 'x'.repeat(16384)]) {
    const sealed = keyring.seal(plaintext, context);
    assert.match(sealed, /^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    if (plaintext.length > 4) assert.equal(sealed.includes(plaintext), false);
    assert.equal(keyring.open(sealed, context), plaintext);
    assert.equal(Keyring.sealerOf(sealed), keyring.currentId);
    assert.equal(keyring.sealedByCurrent(sealed), true);
  }
  assert.notEqual(keyring.seal('same', context), keyring.seal('same', context), 'a fresh IV every time');
});

test('a sealed value does not open in another place, altered, or truncated', () => {
  const keyring = Keyring.fromText(oldKey);
  const sealed = keyring.seal('hunter2', context);
  assert.throws(() => keyring.open(sealed, 'registry_auths.password/abd'), SealError);
  const [v, kid, iv, body] = sealed.split('.') as [string, string, string, string];
  const flipped = Buffer.from(body, 'base64url');
  flipped[0] = (flipped[0] as number) ^ 1;
  assert.throws(() => keyring.open([v, kid, iv, flipped.toString('base64url')].join('.'), context), SealError);
  assert.throws(() => keyring.open([v, kid, iv, body.slice(0, 10)].join('.'), context), SealError);
  assert.throws(() => keyring.open('hunter2', context), /is not a sealed value/);
  assert.throws(() => keyring.open(`v2.${kid}.${iv}.${body}`, context), /is not a sealed value/);
});

test('the previous key still opens, never seals; a key the keyring lacks is named in the error', () => {
  const before = Keyring.fromText(oldKey);
  const sealedBefore = before.seal('hunter2', context);
  const rotating = Keyring.fromText(newKey, oldKey);
  assert.deepEqual(rotating.keyIds, [keyIdOf(parseKey(newKey, 'k')), before.currentId]);
  assert.equal(rotating.open(sealedBefore, context), 'hunter2');
  assert.equal(rotating.sealedByCurrent(sealedBefore), false);
  const sealedAfter = rotating.seal('hunter2', context);
  assert.equal(Keyring.sealerOf(sealedAfter), rotating.currentId);
  assert.throws(
    () => before.open(sealedAfter, context),
    (error: unknown) => {
      assert.ok(error instanceof SealError);
      assert.equal(error.keyId, rotating.currentId);
      assert.match(
        error.message,
        new RegExp(`sealed under key ${rotating.currentId}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`),
      );
      return true;
    },
  );
  assert.equal(Keyring.fromText(newKey).open(sealedAfter, context), 'hunter2');
});

test('keys are 32 bytes of base64 (or base64url, padding optional); anything else is refused without repeating it', () => {
  const bytes = randomBytes(32);
  for (const text of [
    bytes.toString('base64'),
    bytes.toString('base64url'),
    bytes.toString('base64').replace(/=$/, ''),
    ` ${bytes.toString('base64')}\n`,
  ]) {
    assert.deepEqual(parseKey(text, 'SECRETS_KEY'), bytes);
  }
  for (const text of ['', 'short', randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), `${'*'.repeat(43)}=`]) {
    assert.throws(
      () => parseKey(text, 'SECRETS_KEY'),
      (error: unknown) =>
        error instanceof KeyFormatError &&
        /^SECRETS_KEY must be 32 random bytes in base64/.test(error.message) &&
        (text === '' || !error.message.includes(text)),
    );
  }
  assert.equal(keyIdOf(bytes), keyIdOf(Buffer.from(bytes)), 'a key id depends on the key alone');
  assert.notEqual(keyIdOf(bytes), keyIdOf(randomBytes(32)));
});
