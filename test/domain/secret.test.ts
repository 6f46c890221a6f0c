import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkReferences, MissingSecrets, referencesIn, resolveEnv, scanPublicEnv } from '../../src/domain/secret.ts';
import { findTokens, maskTokens } from '../../src/domain/token-formats.ts';
import { EMBEDDED, LOOK_ALIKES, TOKENS } from '../support/tokens.ts';

// The pure rules of secrets: references, resolution, the token formats a public template may not hold, and masking.

for (const [what, token] of Object.entries({ ...TOKENS, ...EMBEDDED })) {
  test(`${what} is found, and masked without a character of its secret part`, () => {
    const [found] = findTokens(token);
    assert.ok(found, `not found in ${token}`);
    const masked = maskTokens(token);
    assert.match(masked, /••••••••/);
    // What is left of the token after masking is its well-known prefix at most.
    const secretPart = token.slice(found.index + 12, found.index + found.length);
    assert.equal(masked.includes(secretPart), false, masked);
  });
}

test('a private key is masked to its END line, its body too', () => {
  const masked = maskTokens(`key:\n${TOKENS['RSA private key']}\nafter`);
  assert.equal(masked, 'key:\n-----BEGIN ••••••••\nafter');
});

for (const value of LOOK_ALIKES) {
  test(`${JSON.stringify(value.slice(0, 40))} is not a token`, () => {
    assert.deepEqual(findTokens(value), []);
    assert.equal(maskTokens(value), value);
  });
}

test('a scan of adversarial text finishes (no backtracking blow-up): prefixes repeated to 32 KiB', () => {
  for (const unit of ['sk-', 'hf_', 'xoxb-1234-', '-----BEGIN A ', 'AKIA', 'github_pat_', 'sk-proj-', '{{ secret.', '{{']) {
    const text = unit.repeat(Math.ceil(32768 / unit.length)).slice(0, 32768);
    findTokens(text);
    referencesIn(text);
  }
});

test('references: names, positions, text that is not a reference left alone', () => {
  assert.deepEqual(
    referencesIn('a{{ secret.A }}b{{secret.B_2}}{{ other }}').references.map((r) => r.name),
    ['A', 'B_2'],
  );
  assert.equal(referencesIn('{{ secret.A-B }}').malformed !== undefined, true);
  assert.equal(referencesIn('{{ secret.A').malformed !== undefined, true);
  assert.throws(
    () => checkReferences({ GOOD: '{{ secret.X }}', 'A/B': '{{ secret.}}' }),
    (e: { errors: { path: string }[] }) => e.errors.length === 1 && e.errors[0]?.path === '/env/A~1B',
  );
});

test('resolution replaces every reference, and lists every missing name once', () => {
  const env = { A: 'x{{ secret.S }}y{{ secret.T }}', B: '{{ secret.S }}', C: 'plain {{ not.a.secret }}' };
  assert.deepEqual(
    resolveEnv(
      env,
      new Map([
        ['S', 's$&1'],
        ['T', '{{ secret.S }}'],
      ]),
    ),
    { A: 'xs$&1y{{ secret.S }}', B: 's$&1', C: 'plain {{ not.a.secret }}' },
  );
  assert.throws(
    () => resolveEnv({ A: '{{ secret.Z }}{{ secret.Y }}', B: '{{ secret.Z }}' }, new Map()),
    (e) => e instanceof MissingSecrets && e.missing.join() === 'Z,Y',
  );
});

test('scanning: a public env with a token is refused naming its key; a private one is not scanned', () => {
  assert.throws(
    () => scanPublicEnv({ isPublic: true, env: { OK: 'x', HF_TOKEN: TOKENS['Hugging Face'] as string } }),
    (e: { errors: { path: string; message: string }[] }) =>
      e.errors.length === 1 && e.errors[0]?.path === '/env/HF_TOKEN' && e.errors[0].message.includes('{{ secret.HF_TOKEN }}'),
  );
  scanPublicEnv({ isPublic: false, env: { HF_TOKEN: TOKENS['Hugging Face'] as string } });
});

test('masking never lengthens a value by more than the dots, and leaves text without tokens as it is', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      const masked = maskTokens(text);
      if (findTokens(text).length === 0) assert.equal(masked, text);
      else assert.notEqual(masked, text);
    }),
  );
});
