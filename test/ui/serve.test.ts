import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { UI_CSP } from '../../src/http/ui.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { ensureUiBuilt } from './built.ts';

// The service serves the built web UI at / (no key needed: the page asks for one), with a CSP that forbids inline
// script, and its hashed assets with long caching. A checkout without a build still starts and says what to run.

describe('the web UI is served at /', () => {
  let h: Harness;
  before(async () => {
    ensureUiBuilt();
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  test('/ is the UI page, with the security headers and no inline script', async () => {
    const page = await h.call('GET', '/');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['content-security-policy'], UI_CSP);
    assert.doesNotMatch(UI_CSP, /unsafe-inline|unsafe-eval/);
    assert.match(UI_CSP, /script-src 'self'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'no-cache');
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert.ok(scripts.length >= 1, 'the page loads its script');
    for (const [, attributes, body] of scripts) {
      assert.match(attributes ?? '', /\bsrc="\/assets\/[^"]+\.js"/, 'every script is a file');
      assert.equal(body?.trim(), '', 'no inline script');
    }
    assert.doesNotMatch(page.text, /<style\b|\sstyle="|\son[a-z]+="/i, 'no inline style or handler');
  });

  test('its assets are served with long caching; a revalidation gets a 304; an unknown asset a 404 problem', async () => {
    const page = await h.call('GET', '/');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), String(assets));
    for (const asset of assets) {
      const reply = await h.call('GET', asset);
      assert.equal(reply.status, 200, asset);
      assert.equal(reply.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(reply.headers['content-type']), asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      const again = await h.call('GET', asset, { headers: { 'if-none-match': String(reply.headers.etag) } });
      assert.equal(again.status, 304);
    }
    const missing = await h.call('GET', '/assets/nothing-here.js');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.status, 404);
    const outside = await h.call('GET', '/assets/..%2F..%2Fpackage.json');
    assert.equal(outside.status, 404);
  });

  test('the API is unchanged: /v1 still needs a key, /docs still answers', async () => {
    assert.equal((await h.call('GET', '/v1/templates')).status, 401);
    const docs = await h.call('GET', '/docs/');
    assert.equal(docs.status, 200);
    assert.equal(docs.headers['content-security-policy'], undefined, 'the UI policy is not put on swagger-ui');
  });
});

test('without a build, / answers 503 saying to run npm run build:ui, and the API works', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-ui-'));
  const store = Store.open(
    dialectFor(`sqlite:${join(dir, 'podplate.db')}`, { poolSize: 1, statementTimeoutMs: 5000, connectionTimeoutMs: 5000 }),
  );
  await store.migrate();
  const app = await buildApp({
    store,
    config: { KEY_CACHE_TTL_MS: 0, REQUEST_TIMEOUT_MS: 30_000, HEADERS_TIMEOUT_MS: 10_000, RATE_LIMIT_PER_MINUTE: 0 },
    uiDir: join(dir, 'no-dist'),
  });
  try {
    const page = await app.inject({ method: 'GET', url: '/' });
    assert.equal(page.statusCode, 503);
    assert.match(page.body, /npm run build:ui/);
    assert.equal(page.headers['content-security-policy'], UI_CSP);
    assert.equal((await app.inject({ method: 'GET', url: '/assets/index.js' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  } finally {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
