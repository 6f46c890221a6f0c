import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { podplate } from '../support/process.ts';
import { browserPresent, openSession, type Session } from './harness.ts';

// Daily use, as a RunPod user meets it: Alice has a template bound to an endpoint. She walks Mine → a search on Public
// → Official → her template's history → its endpoint: her bound template never vanishes, a search says what the other
// tabs hold, people are named (not keys), official cards say "Official" alone, releases say where they stand, env
// values are masked everywhere with a reveal, errors speak of the fields on screen, and nothing answers 403 on the way.

const hasBrowser = browserPresent('daily use of the web UI');
const PASSWORD = 'hunter2-sentinel';
const NEW_PASSWORD = 'newpass123-sentinel';

describe('daily use of the web UI', { skip: !hasBrowser }, () => {
  let s: Session;
  const ids: Record<string, string> = {};

  before(async () => {
    s = await openSession(['alice', 'bob']);
    const [alice, bob, platform] = [s.keys.alice, s.keys.bob, s.keys.platform].map((key) => key ?? '') as [string, string, string];
    const create = async (key: string, body: Record<string, unknown>) => (await s.api(key, 'POST', '/v1/templates', body)).id;
    ids.comfy = await create(platform, { name: 'ComfyUI', imageName: 'runpod/comfyui:1', isPublic: true });
    ids.popular = await create(bob, { name: 'bob popular', imageName: 'bob/popular:1', isPublic: true, env: { MODEL: 'llama' } });
    ids.newer = await create(bob, { name: 'bob newer', imageName: 'bob/newer:1', isPublic: true });
    await s.api(platform, 'POST', `/v1/templates/${ids.popular}/usage`, { usageId: 'u-popular', runtimeInMin: 500, earned: 5 });
    ids.worker = await create(alice, {
      name: 'sdxl worker',
      imageName: 'acme/sdxl:1.0',
      isServerless: true,
      env: { JUPYTER_PASSWORD: PASSWORD, MODEL: 'sdxl-base', HF_TOKEN: '{{ secret.HF_TOKEN }}' },
    });
    ids.endpoint = (await s.api(alice, 'POST', '/v1/endpoints', { name: 'sdxl-prod', templateId: ids.worker, workersMax: 4 })).id;
    // Two changes with a labelled key: two releases, the first superseded by the second, which no platform picked up.
    const laptop = (await s.api<{ key: string }>(alice, 'POST', '/v1/accounts/alice/keys', { label: 'laptop' })).key;
    await s.api(laptop, 'PATCH', `/v1/templates/${ids.worker}`, {
      env: { JUPYTER_PASSWORD: NEW_PASSWORD, MODEL: 'sdxl-base', HF_TOKEN: '{{ secret.HF_TOKEN }}' },
    });
    await s.api(laptop, 'PATCH', `/v1/templates/${ids.worker}`, { imageName: 'acme/sdxl:1.1' });
    await s.signIn(alice);
  });
  after(async () => {
    await s?.close();
  });

  test('Mine: the bound template is there, its "Live on endpoint" badge inside its card; one "New template" in the top bar', async () => {
    const { page } = s;
    const card = page.locator('.templates li').filter({ hasText: 'sdxl worker' });
    const badge = card.getByRole('link', { name: 'Live on endpoint sdxl-prod' });
    await badge.waitFor();
    const [outer, inner] = [await card.boundingBox(), await badge.boundingBox()];
    assert.ok(outer && inner, 'both drawn');
    assert.ok(
      inner.y >= outer.y && inner.y + inner.height <= outer.y + outer.height,
      `badge ${JSON.stringify(inner)} in ${JSON.stringify(outer)}`,
    );
    assert.ok(inner.x >= outer.x && inner.x + inner.width <= outer.x + outer.width);
    const border = await card.evaluate((el) => getComputedStyle(el).borderTopWidth);
    assert.equal(border, '1px', 'the list item is the card: the badge is inside its border');
    assert.equal(await page.getByRole('link', { name: 'New template' }).count(), 1);
    // The API names the flag to the owner who asks without it.
    const hidden = await fetch(`${s.server.url}/v1/templates/${ids.worker}`, { headers: { authorization: `Bearer ${s.keys.alice}` } });
    assert.equal(hidden.status, 404);
    assert.match((await hidden.json()).detail, /includeEndpointBoundTemplates=true/);
    await s.shot('daily-01-mine');
  });

  test('Public sorts most used first; a search with no match there says what Official holds, and links to it', async () => {
    const { page } = s;
    await page.getByRole('tab', { name: 'Public' }).click();
    await page.getByRole('tab', { name: 'Public', selected: true }).waitFor();
    await page.locator('.templates .name').first().filter({ hasText: 'bob popular' }).waitFor();
    assert.equal(await page.getByLabel('Sort').inputValue(), 'popular');
    assert.deepEqual(await page.locator('.templates .name').allTextContents(), ['bob popular', 'bob newer']);
    await page.getByLabel('Search').fill('comfy');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No templates match.').waitFor();
    const elsewhere = page.getByRole('link', { name: '1 match on Official' });
    await elsewhere.waitFor();
    await s.shot('daily-02-search-elsewhere', 'ui-search-elsewhere.png');
    await elsewhere.click();
    await page.getByRole('tab', { name: 'Official', selected: true }).waitFor();
    await page.locator('.templates .name').filter({ hasText: 'ComfyUI' }).waitFor();
    assert.equal(await page.getByLabel('Search').inputValue(), 'comfy');
  });

  test('Official: the card says "Official" alone, with no account name and no "Public" badge', async () => {
    const card = s.page.locator('.templates li').filter({ hasText: 'ComfyUI' });
    assert.deepEqual(await card.locator('.badge').allTextContents(), ['Image not checked', 'NVIDIA', 'Pod', 'Official']);
    const byline = (await card.locator('.byline').textContent()) ?? '';
    assert.match(byline, /^Official · /);
    assert.doesNotMatch(byline, /platform|by /);
  });

  test("another account's template opens without a 403, its values masked behind a reveal", async () => {
    const { page } = s;
    await page.goto(`${s.server.url}/#/t/${ids.popular}`);
    await s.heading('bob popular').waitFor();
    const row = page.locator('table.env tr').filter({ hasText: 'MODEL' });
    assert.equal(await row.locator('code').last().textContent(), '••••••••');
    await row.getByRole('button', { name: 'Reveal MODEL' }).click();
    assert.equal(await row.locator('code').last().textContent(), 'llama');
    assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0, 'not hers');
    assert.deepEqual(s.consoleErrors, [], 'no request answered 403');
  });

  test('History names the account and the key label, and masks values with a reveal; the form masks them too', async () => {
    const { page } = s;
    await page.goto(`${s.server.url}/#/t/${ids.worker}/history`);
    await s.heading('History of sdxl worker').waitFor();
    const bylines = await page.locator('.revisions .byline').allTextContents();
    assert.equal(bylines.length, 3);
    assert.match(bylines[0] ?? '', /by alice \(laptop\)$/);
    assert.match(bylines[2] ?? '', /by alice$/);
    assert.equal((await page.locator('main').textContent())?.includes('by key'), false);
    const main = (await page.locator('main').textContent()) ?? '';
    assert.equal(main.includes(PASSWORD) || main.includes(NEW_PASSWORD), false, 'no value in clear');
    await page.getByRole('button', { name: 'Reveal JUPYTER_PASSWORD after' }).click();
    await page.getByText(NEW_PASSWORD).waitFor();
    await s.shot('daily-03-history', 'ui-history-people.png');

    await page.goto(`${s.server.url}/#/t/${ids.worker}/edit`);
    await s.heading('Edit sdxl worker').waitFor();
    const value = (n: number) => page.getByLabel(`Value ${n}`, { exact: true });
    assert.equal(await value(1).getAttribute('type'), 'password', 'JUPYTER_PASSWORD is hidden');
    assert.equal(await value(2).getAttribute('type'), 'password', 'MODEL too: one rule for every value');
    assert.equal(await value(3).getAttribute('type'), 'text', 'a secret reference is shown as written');
    await page.getByRole('button', { name: 'Reveal JUPYTER_PASSWORD' }).click();
    assert.equal(await value(1).getAttribute('type'), 'text');
  });

  test('errors speak of the fields on screen, and of no API route', async () => {
    const { page } = s;
    await page.goto(`${s.server.url}/#/new`);
    await s.heading('New template').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('checked');
    await page.getByLabel('Image', { exact: true }).fill('acme/app:1');
    await page.getByRole('button', { name: 'Add port' }).click();
    await page.getByLabel('Port 1', { exact: true }).fill('70000');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name 1', { exact: true }).fill('bad-name');
    await page.getByLabel('Value 1', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.locator('.summary .problem').waitFor();
    const summary = (await page.locator('.summary').textContent()) ?? '';
    assert.match(summary, /Port 1: must be a whole number from 1 to 65535/);
    assert.match(summary, /Variable 1: must be letters, digits and underscores only/);
    assert.doesNotMatch(summary, /\^|\$|<http\|tcp>|\/v1\//);
    await page.getByLabel('Port 1', { exact: true }).fill('8888');
    await page.getByLabel('Name 1', { exact: true }).fill('HF_TOKEN');
    await page.getByLabel('Value 1', { exact: true }).fill('hf_dKrY5cJqXElSz6DkRyfMt07eLsZGnU18Fm');
    await page.getByLabel('Public').check();
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.locator('.summary .problem').filter({ hasText: 'secret' }).waitFor();
    assert.doesNotMatch((await page.locator('.summary').textContent()) ?? '', /PUT|\/v1\//);
    // The two refused saves are the console's only errors: the 400s asked for.
    assert.deepEqual(
      s.consoleErrors.filter((e) => !/status of 400/.test(e)),
      [],
    );
    s.consoleErrors.length = 0;
    // Leave the unsaved form: the guard asks, and is answered.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.goto(`${s.server.url}/#/`);
    await s.heading('Templates').waitFor();
  });

  test('the endpoint: releases say "waiting for the platform to pick it up" and "superseded by release 3"; no webhook for a user', async () => {
    const { page } = s;
    await page.goto(`${s.server.url}/#/e/${ids.endpoint}`);
    await s.heading('Endpoint sdxl-prod').waitFor();
    const releases = page.locator('.releases > li');
    await releases.first().waitFor();
    assert.match((await releases.nth(0).textContent()) ?? '', /Waiting for the platform to pick it up/);
    assert.match((await releases.nth(1).textContent()) ?? '', /Superseded by release 3/);
    assert.match((await releases.nth(0).textContent()) ?? '', /revision 3 by alice \(laptop\)/);
    const main = (await page.locator('main').textContent()) ?? '';
    assert.doesNotMatch(main, /webhook|0 of 0 workers/i);
    assert.match((await page.locator('dd').filter({ hasText: 'acme/sdxl' }).textContent()) ?? '', /waiting for the platform/);
    await s.shot('daily-04-endpoint', 'ui-releases-waiting.png');
  });

  test("the CLI names the endpoint's template; a phone shows the first card on the first screen", async () => {
    const cli = podplate(['endpoints', 'ls'], { PODPLATE_URL: s.server.url, PODPLATE_API_KEY: s.keys.alice ?? '', COLUMNS: '120' });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /sdxl-prod\s+sdxl worker\s/);

    const { page } = s;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${s.server.url}/#/?tab=public`);
    const first = page.locator('.templates li').first();
    await first.waitFor();
    const box = await first.boundingBox();
    assert.ok(box && box.y + box.height <= 844, `the first card ends at ${box && box.y + box.height}px, below the first screen`);
    await s.shot('daily-05-phone', 'ui-phone.png');
    await page.setViewportSize({ width: 1200, height: 800 });
    assert.deepEqual(s.consoleErrors, []);
  });
});
