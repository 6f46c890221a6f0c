import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { image, startRegistry, type TestRegistry } from '../support/registry.ts';
import { browserPresent, openSession, type Session } from './harness.ts';

// The image check where people look: a badge with the size on every card and page; the template page's image card with
// platforms, CUDA, the digest and its copy button, the reason of a failure, and "Check again" after the tag is pushed.

const hasBrowser = browserPresent('image checks in the web UI');

describe('image checks in the web UI', { skip: !hasBrowser }, () => {
  let s: Session;
  let registry: TestRegistry;
  let digest: string;
  const ids: Record<string, string> = {};

  before(async () => {
    registry = await startRegistry('none');
    digest = await registry.push('ui/cuda', 'v1', image({ env: ['CUDA_VERSION=12.4.1'] }));
    s = await openSession(['alice'], {
      IMAGE_CHECK: 'on',
      IMAGE_CHECK_INSECURE_REGISTRIES: registry.host,
      IMAGE_CHECK_POLL_MS: '50',
    });
    const alice = s.keys.alice ?? '';
    ids.good = (await s.api(alice, 'POST', '/v1/templates', { name: 'cuda app', imageName: `${registry.host}/ui/cuda:v1` })).id;
    ids.bad = (await s.api(alice, 'POST', '/v1/templates', { name: 'not pushed yet', imageName: `${registry.host}/ui/later:v1` })).id;
    for (const id of Object.values(ids)) {
      await eventually(`the check of ${id}`, 20_000, async () => {
        const t = await s.api<{ imageCheck: { status: string } }>(alice, 'GET', `/v1/templates/${id}`);
        return t.imageCheck.status !== 'pending';
      });
    }
    await s.signIn(alice);
  });
  after(async () => {
    await s?.close();
    await registry?.stop();
  });

  test('every card shows the badge: verified with its size, failed', async () => {
    const { page } = s;
    const good = page.locator('.template', { hasText: 'cuda app' });
    await good.locator('.image-check').filter({ hasText: 'Image verified · 0.0 GB' }).waitFor();
    assert.equal(await good.locator('.image-check').getAttribute('data-status'), 'verified');
    const bad = page.locator('.template', { hasText: 'not pushed yet' });
    assert.equal(await bad.locator('.image-check').textContent(), 'Image check failed');
    assert.match((await bad.locator('.image-check').getAttribute('title')) ?? '', /no such repository or tag/);
    await s.shot('images-01-list');
  });

  test("the template page shows the image's platforms, CUDA, size and digest, which copies", async () => {
    const { page } = s;
    await page.locator('.template', { hasText: 'cuda app' }).click();
    await s.heading('cuda app').waitFor();
    const card = page.locator('.image-card');
    await card.getByText('Image verified').waitFor();
    assert.equal(await card.locator('dt:text("Platforms") + dd').textContent(), 'linux/amd64');
    assert.equal(await card.locator('dt:text("CUDA") + dd').textContent(), '12.4.1');
    assert.match((await card.locator('dt:text("Size") + dd').textContent()) ?? '', /^0\.0 GB compressed/);
    assert.equal(await card.locator('code.digest').textContent(), digest);
    await card.getByRole('button', { name: 'Copy image digest' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), digest);
    await s.shot('images-02-verified');
  });

  test('a failed check shows its reason; "Check again" after the tag is pushed verifies it', async () => {
    const { page } = s;
    await page.goto(`${s.server.url}/#/t/${ids.bad}`);
    await s.heading('not pushed yet').waitFor();
    const card = page.locator('.image-card');
    await card.getByText(/has no image .*ui\/later:v1: no such repository or tag/).waitFor();
    const pushed = await registry.push('ui/later', 'v1', image({ marker: 'later' }));
    await card.getByRole('button', { name: 'Check again' }).click();
    await card.locator('.image-check', { hasText: 'Image verified' }).waitFor();
    assert.equal(await card.locator('code.digest').textContent(), pushed);
    assert.equal(await card.locator('.problem').count(), 0);
    assert.deepEqual(s.consoleErrors, []);
  });
});
