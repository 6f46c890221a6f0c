import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { browserPresent, openSession, type Session } from './harness.ts';

// Browsing as a heavy user: Alice has 25 templates of her own, more than a page. Each tab reads its own scope in full
// pages, so the Official tab shows every official template and the Public tab every public one, hers among them; the
// cards say who made a template and how much it is used, and the others' tabs sort by use.

const hasBrowser = browserPresent('browsing as a heavy user in the web UI');
const pad = (i: number) => String(i).padStart(2, '0');

describe('browsing as a heavy user in the web UI', { skip: !hasBrowser }, () => {
  let s: Session;
  const official = Array.from({ length: 23 }, (_, i) => `official ${pad(i + 1)}`);

  /** The names the list shows once they are `expected` (or after 10 s, whatever they are then). */
  const listed = async (expected: string[]) => {
    const read = () => s.page.locator('.templates .name').allTextContents();
    const deadline = Date.now() + 10_000;
    let names = await read();
    while (!isDeepStrictEqual(names, expected) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      names = await read();
    }
    assert.deepEqual(names, expected);
  };

  before(async () => {
    s = await openSession(['alice', 'bob']);
    const [alice, bob, platform] = [s.keys.alice, s.keys.bob, s.keys.platform].map((key) => key ?? '') as [string, string, string];
    const ids: Record<string, string> = {};
    for (const name of official)
      ids[name] = (await s.api(platform, 'POST', '/v1/templates', { name, imageName: 'runpod/base:1', isPublic: true })).id;
    for (const i of [1, 2, 3])
      ids[`bob ${i}`] = (await s.api(bob, 'POST', '/v1/templates', { name: `bob public ${i}`, imageName: 'bob/x:1', isPublic: true })).id;
    // Alice's 25, created last, so that they come first in any list mixing scopes by age; two of them public.
    for (let i = 1; i <= 25; i++)
      await s.api(alice, 'POST', '/v1/templates', { name: `alice ${pad(i)}`, imageName: 'alice/x:1', isPublic: i <= 2 });
    const use = (id: string | undefined, runtimeInMin: number) =>
      s.api(platform, 'POST', `/v1/templates/${id}/usage`, { usageId: `u-${id}`, runtimeInMin, earned: 1 });
    await use(ids['official 05'], 900);
    await use(ids['official 17'], 60);
    await use(ids['bob 2'], 90);
    await s.signIn(alice);
  });
  after(async () => {
    await s?.close();
  });

  test('with 25 templates of her own, Alice sees every official template on the Official tab, in full pages', async () => {
    const { page } = s;
    await page.getByRole('tab', { name: 'Official' }).click();
    await page.getByRole('tab', { name: 'Official', selected: true }).waitFor();
    // Most used first is the default here; newest first is a choice.
    assert.equal(await page.getByLabel('Sort').inputValue(), 'popular');
    await page.getByLabel('Sort').selectOption('newest');
    await page.waitForURL(/sort=newest/);
    const newest = [...official].reverse();
    await listed(newest.slice(0, 20));
    await s.shot('browse-01-official', 'ui-official.png');
    await page.getByRole('button', { name: 'Next page' }).click();
    await listed(newest.slice(20));
    assert.equal(await page.getByRole('button', { name: 'Next page' }).count(), 0);
  });

  test('the Public tab shows every public template, hers included; cards say who made it and how much it is used', async () => {
    const { page } = s;
    await page.getByRole('tab', { name: 'Public' }).click();
    await page.getByRole('tab', { name: 'Public', selected: true }).waitFor();
    await listed(['alice 02', 'alice 01', 'bob public 3', 'bob public 2', 'bob public 1']);
    const card = page.locator('.templates li').filter({ hasText: 'bob public 2' });
    assert.equal(await card.locator('.byline').textContent(), 'by bob · used 90 min');
    assert.equal(
      await page.locator('.templates li').filter({ hasText: 'alice 01' }).locator('.byline').textContent(),
      'by alice · not used yet',
    );
    await page.getByLabel('Sort').selectOption('popular');
    await page.waitForURL((url) => !url.hash.includes('sort='));
    // The list redraws after the URL changes: the one before, or none, may show for a moment.
    await page.waitForFunction(() => document.querySelector('.templates .name')?.textContent === 'bob public 2');
  });

  test('most used first on the Official tab too; Mine pages through all 25', async () => {
    const { page } = s;
    await page.getByRole('tab', { name: 'Official' }).click();
    await page.waitForURL(/tab=official/);
    await page.waitForFunction(() => document.querySelector('.templates .name')?.textContent === 'official 05');
    assert.deepEqual((await page.locator('.templates .name').allTextContents()).slice(0, 2), ['official 05', 'official 17']);
    await page.getByRole('tab', { name: 'Mine' }).click();
    await page.getByRole('tab', { name: 'Mine', selected: true }).waitFor();
    const mine = Array.from({ length: 25 }, (_, i) => `alice ${pad(25 - i)}`);
    await listed(mine.slice(0, 20));
    await page.getByRole('button', { name: 'Next page' }).click();
    await listed(mine.slice(20));
  });

  test('no screen broke the Content-Security-Policy or threw', () => {
    assert.deepEqual(s.consoleErrors, []);
  });
});
