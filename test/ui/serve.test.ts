import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { UI_CSP } from '../../src/http/plugins/ui.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { Podplate } from '../../src/usecases/podplate.ts';
import { ensureUiBuilt } from './built.ts';

// The service serves the built web UI at / (no key needed: the page asks for one), with a CSP that forbids inline
// script, and its hashed assets with long caching. A checkout without a build still starts and says what to run.

/** The app on a throwaway SQLite file, serving the UI from `uiDir` (ui/dist by default). No database matters here. */
async function app(uiDir?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-ui-'));
  const store = Store.open(
    dialectFor(`sqlite:${join(dir, 'podplate.db')}`, { poolSize: 1, statementTimeoutMs: 5000, connectionTimeoutMs: 5000 }),
  );
  await store.migrate();
  const instance = await buildApp({
    podplate: new Podplate(store),
    config: { REQUEST_TIMEOUT_MS: 30_000, HEADERS_TIMEOUT_MS: 10_000, RATE_LIMIT_PER_MINUTE: 0 },
    uiDir: uiDir === undefined ? undefined : join(dir, uiDir),
  });
  const call = async (method: 'GET', url: string, options: { headers?: Record<string, string> } = {}) => {
    const response = await instance.inject({ method, url, headers: options.headers });
    let body: any;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, headers: response.headers, text: response.body, body };
  };
  const close = async () => {
    await instance.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { call, close };
}

describe('the web UI is served at /', () => {
  let h: Awaited<ReturnType<typeof app>>;
  before(async () => {
    ensureUiBuilt();
    h = await app();
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
    // Swagger UI has a policy of its own (test/http/openapi.test.ts), not the UI's.
    assert.notEqual(docs.headers['content-security-policy'], UI_CSP, 'the UI policy is not put on swagger-ui');
    assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
  });
});

test('without a build, / answers 503 saying to run npm run build:ui, and the API works', async () => {
  const h = await app('no-dist');
  try {
    const page = await h.call('GET', '/');
    assert.equal(page.status, 503);
    assert.match(page.text, /npm run build:ui/);
    assert.equal(page.headers['content-security-policy'], UI_CSP);
    assert.equal((await h.call('GET', '/assets/index.js')).status, 404);
    assert.equal((await h.call('GET', '/healthz')).status, 200);
    assert.equal((await h.call('GET', '/v1/templates')).status, 401);
  } finally {
    await h.close();
  }
});
