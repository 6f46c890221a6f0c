import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError, ConfigSchema, readConfig } from '../src/config.ts';

// The environment's settings: each checked at start-up, each in the configuration table of docs/configuration.md.

test('every setting is in the configuration table of docs/configuration.md, with its default', () => {
  const readme = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
    assert.ok(row, `${name} has a row in the configuration table`);
    const fallback = (schema as { default?: unknown }).default;
    if (fallback !== undefined && fallback !== '')
      assert.ok(row.includes(`\`${fallback}\``), `${name}'s row gives its default ${fallback}`);
  }
});

test("HEAP_GROWTH_PERCENT: 50 by default, 0 to leave it to V8, at most 300 (V8's own ceiling); a bad value stops the start naming it", () => {
  assert.equal(readConfig({}).HEAP_GROWTH_PERCENT, 50);
  assert.equal(readConfig({ HEAP_GROWTH_PERCENT: '0' }).HEAP_GROWTH_PERCENT, 0);
  for (const bad of ['-1', '301', '1.5', 'lots']) {
    assert.throws(
      () => readConfig({ HEAP_GROWTH_PERCENT: bad }),
      (error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`HEAP_GROWTH_PERCENT="${bad.replace('.', '\\.')}"`));
        return true;
      },
    );
  }
});

test('CORS_ORIGINS: none by default; origins as browsers send them, or "*"; a path or trailing slash stops the start naming it', () => {
  assert.equal(readConfig({}).CORS_ORIGINS, '');
  for (const good of ['https://console.example.com', 'https://a.example.com, http://localhost:5173', '*'])
    assert.equal(readConfig({ CORS_ORIGINS: good }).CORS_ORIGINS, good);
  for (const bad of ['https://console.example.com/', 'console.example.com', 'https://a.example.com;https://b.example.com', 'ftp://x']) {
    assert.throws(
      () => readConfig({ CORS_ORIGINS: bad }),
      (error) => error instanceof ConfigError && error.message.startsWith(`CORS_ORIGINS=${JSON.stringify(bad)}`),
    );
  }
});

test('a webhook signing secret that decodes to fewer than 16 bytes is refused, naming the setting', () => {
  const url = 'http://127.0.0.1:9/hooks';
  for (const [secret, reason] of [
    ['whsec_################', /not base64/],
    ['whsec_AAAAAAAAAAAAAA==', /a key of 10 bytes; it must be at least 16/],
    ['short', /16 bytes or more/],
  ] as const) {
    assert.throws(
      () => readConfig({ RELEASE_WEBHOOK_URL: url, RELEASE_WEBHOOK_SECRET: secret }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /RELEASE_WEBHOOK_SECRET/);
        assert.match(error.message, reason);
        assert.deepEqual(error.settings, ['RELEASE_WEBHOOK_SECRET']);
        return true;
      },
    );
  }
  assert.equal(
    readConfig({ RELEASE_WEBHOOK_URL: url, RELEASE_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }).RELEASE_WEBHOOK_URL,
    url,
  );
});
