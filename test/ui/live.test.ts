import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserPresent, openSession, type Session } from './harness.ts';

// A live template from its owner's side: which endpoint runs it, what saving and rolling back it will do (asked first,
// with the diff by label and by variable), why it can't be deleted, the endpoint's releases as they roll, and
// endpoints made and removed in the UI.

const hasBrowser = browserPresent('live templates and endpoints in the web UI');

const ENV = Object.fromEntries([
  ['AWS_ACCESS_KEY_ID', 'AKIAEXAMPLE'],
  ['AWS_SECRET_ACCESS_KEY', 'not-really'],
  ['HF_HOME', '/workspace/hf'],
  ['MODEL', 'sdxl-base-1.0'],
  ...Array.from({ length: 10 }, (_, i) => [`SETTING_${i + 1}`, `value ${i + 1}`]),
]);

describe('live templates and endpoints in the web UI', { skip: !hasBrowser }, () => {
  let s: Session;
  const ids: Record<string, string> = {};
  const template = (id: string) =>
    s.api<Record<string, unknown>>(s.keys.alice as string, 'GET', `/v1/templates/${id}?includeEndpointBoundTemplates=true`);
  /** The one dialog the next action opens: window.confirm, answered as told. */
  const answerConfirm = (accept: boolean) =>
    new Promise<string>((resolve) =>
      s.page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      }),
    );

  before(async () => {
    s = await openSession(['alice']);
    const a = s.keys.alice as string;
    ids.worker = (
      await s.api(a, 'POST', '/v1/templates', {
        name: 'sdxl worker',
        imageName: 'acme/sdxl:1.0',
        isServerless: true,
        env: ENV,
      })
    ).id;
    ids.endpoint = (await s.api(a, 'POST', '/v1/endpoints', { name: 'sdxl-prod', templateId: ids.worker, workersMax: 4 })).id;
    await s.signIn(a);
  });
  after(async () => {
    await s?.close();
  });

  test('the detail page says which endpoint runs the template, and why Delete is off', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Live on endpoint sdxl-prod' }).waitFor();
    await page.getByRole('link', { name: /^sdxl worker/ }).click();
    await s.heading('sdxl worker').waitFor();
    const badge = page.getByRole('link', { name: 'Live on endpoint sdxl-prod' });
    assert.equal(await badge.getAttribute('href'), `#/e/${ids.endpoint}`);
    const remove = page.getByRole('button', { name: 'Delete' });
    assert.equal(await remove.isDisabled(), true);
    const why = await page.locator(`[id="${await remove.getAttribute('aria-describedby')}"]`).textContent();
    assert.equal(why, 'Endpoint sdxl-prod runs this template: delete the endpoint first.');
    assert.equal(await page.getByRole('link', { name: 'Create an endpoint' }).count(), 0, 'bound already');
  });

  test('fourteen variables get the page’s width, no header or name is broken mid-word, and all copy as NAME=value', async () => {
    const { page } = s;
    const main = await page.locator('main').boundingBox();
    const table = await page.locator('table.env').boundingBox();
    assert.ok(main && table && table.width > main.width * 0.8, `the table is ${table?.width}px of ${main?.width}px`);
    assert.equal(await page.locator('.readme').count(), 0, 'no empty readme panel beside it');
    // One line box each: "Name" and the longest name are never split.
    const lines = (selector: string) =>
      page.locator(selector).evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      });
    assert.equal(await lines('table.env th:first-child'), 1);
    assert.equal(await lines('table.env code:text-is("AWS_SECRET_ACCESS_KEY")'), 1);
    assert.equal(await lines('main h1'), 1);
    await s.shot('live-01-template', 'ui-live-template.png');
    await page.getByRole('button', { name: 'Copy environment as NAME=value lines' }).click();
    await page.getByRole('button', { name: 'Copy environment as NAME=value lines' }).filter({ hasText: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(
      copied,
      Object.entries(ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
  });

  test('saving a live template asks first, with the diff by label and by variable; cancelled, nothing changes', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Edit' }).click();
    await s.heading('Edit sdxl worker').waitFor();
    await page.locator('.live-note').filter({ hasText: 'Saving starts a rolling release on this endpoint.' }).waitFor();
    await page.getByLabel('Image').fill('acme/sdxl:1.1');
    const model = page.locator('.env-name').nth(Object.keys(ENV).indexOf('MODEL'));
    assert.equal(await model.inputValue(), 'MODEL');
    await page.locator('.env-value').nth(Object.keys(ENV).indexOf('MODEL')).fill('sdxl-refiner-1.0');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save and release to sdxl-prod?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', /Saving starts a rolling release on endpoint sdxl-prod/);
    const rows = await dialog.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows, [
      ['Image', 'acme/sdxl:1.0', 'acme/sdxl:1.1'],
      // A variable's values are masked, each with a reveal of its own.
      ['Variable MODEL', '•••••••• Reveal', '•••••••• Reveal'],
    ]);
    await s.shot('live-02-save-confirm', 'ui-save-confirm.png');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await template(ids.worker as string)).revision, 1, 'nothing was saved');

    await page.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByRole('button', { name: 'Save and start the release' }).click();
    await s.heading('sdxl worker').waitFor();
    const saved = await template(ids.worker as string);
    assert.equal(saved.revision, 2);
    assert.equal(saved.imageName, 'acme/sdxl:1.1');
    const releases = await s.api<{ version: number; status: string }[]>(
      s.keys.alice as string,
      'GET',
      `/v1/endpoints/${ids.endpoint}/releases`,
    );
    assert.deepEqual(
      releases.map((r) => [r.version, r.status]),
      [[2, 'pending']],
    );
  });

  test('history shows per-variable rows with the form’s labels; a rollback of a live template asks first', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'History' }).click();
    await s.heading('History of sdxl worker').waitFor();
    const latest = page.locator('.revisions > li').first();
    const rows = await latest.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows, [
      ['Image', 'acme/sdxl:1.0', 'acme/sdxl:1.1'],
      // A variable's values are masked, each with a reveal of its own.
      ['Variable MODEL', '•••••••• Reveal', '•••••••• Reveal'],
    ]);
    await latest.getByRole('button', { name: 'Reveal MODEL after' }).click();
    await latest.locator('ins').filter({ hasText: 'sdxl-refiner-1.0' }).waitFor();
    await s.shot('live-03-history', 'ui-history.png');
    await page.getByRole('button', { name: 'Roll back to revision 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll back to revision 1?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', /starts a rolling release on endpoint sdxl-prod/);
    assert.deepEqual(await dialog.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent))), [
      ['Image', 'acme/sdxl:1.1', 'acme/sdxl:1.0'],
      ['Variable MODEL', '•••••••• Reveal', '•••••••• Reveal'],
    ]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await template(ids.worker as string)).revision, 2, 'Escape: nothing rolled back');
  });

  test('the releases page follows a rolling release without a reload, and shows the image the workers run', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Live on endpoint sdxl-prod' }).click();
    await s.heading('Endpoint sdxl-prod').waitFor();
    const running = page.locator('.running-image');
    assert.equal(await running.textContent(), 'acme/sdxl:1.0', 'version 2 has not rolled yet');
    const [release] = await s.api<{ id: string }[]>(s.keys.alice as string, 'GET', `/v1/endpoints/${ids.endpoint}/releases`);
    const progress = (body: unknown) =>
      s.api(s.keys.platform as string, 'POST', `/v1/endpoints/${ids.endpoint}/releases/${release?.id}/progress`, body);
    await progress({ status: 'rolling', workersUpdated: 2, workersTotal: 4 });
    const latest = page.locator('.releases > li').first();
    await latest.locator('.status').filter({ hasText: 'rolling' }).waitFor();
    await latest.getByText('Workers updated: 2 of 4').waitFor();
    await s.shot('live-04-rolling', 'ui-releases.png');
    await progress({ status: 'completed', workersUpdated: 4, workersTotal: 4 });
    await latest.locator('.status').filter({ hasText: 'completed' }).waitFor();
    await running.filter({ hasText: 'acme/sdxl:1.1' }).waitFor();
  });

  test('the endpoint list names templates; an endpoint is created for a duplicate, refused first for a missing name', async () => {
    const { page } = s;
    await page.getByRole('link', { name: '← Endpoints' }).click();
    await s.heading('Endpoints').waitFor();
    assert.equal(await page.locator('tbody tr td a').first().textContent(), 'sdxl worker');

    await page.goto(`${s.server.url}/#/t/${ids.worker}`);
    await s.heading('sdxl worker').waitFor();
    await page.getByRole('link', { name: 'Duplicate' }).click();
    await s.heading('Duplicate sdxl worker').waitFor();
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'sdxl worker (copy)');
    assert.equal(await page.getByLabel('Serverless').isChecked(), true);
    await page.getByRole('button', { name: 'Create template' }).click();
    await s.heading('sdxl worker (copy)').waitFor();
    ids.copy = /#\/t\/([^/?]+)/.exec(page.url())?.[1] ?? '';
    const copy = await template(ids.copy);
    assert.equal(copy.revision, 1);
    assert.deepEqual(copy.env, { ...ENV, MODEL: 'sdxl-refiner-1.0' });
    await page.getByRole('link', { name: 'Create an endpoint' }).click();
    await s.heading('New endpoint').waitFor();
    assert.equal(await page.getByLabel('Template').inputValue(), ids.copy, 'the new copy is chosen');
    assert.deepEqual(await page.getByLabel('Template').locator('option').allTextContents(), ['Choose a template', 'sdxl worker (copy)']);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const name = page.getByLabel('Name');
    await page.locator('.summary .problem').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    await name.fill('sdxl-staging');
    await page.getByLabel('Most workers at once').fill('2');
    await s.shot('live-05-new-endpoint', 'ui-new-endpoint.png');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await s.heading('Endpoint sdxl-staging').waitFor();
    assert.equal(await page.locator('.running-image').textContent(), 'acme/sdxl:1.1');
    assert.match((await page.locator('.fields').textContent()) ?? '', /Workers0 to 2/);
  });

  test('deleting an endpoint asks first; then its template can be deleted', async () => {
    const { page } = s;
    const dismissed = answerConfirm(false);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    assert.match(await dismissed, /Delete the endpoint “sdxl-staging”/);
    await s.heading('Endpoint sdxl-staging').waitFor();
    void answerConfirm(true);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await s.heading('Endpoints').waitFor();
    assert.deepEqual(await page.locator('tbody th').allTextContents(), ['sdxl-prod']);
    await page.goto(`${s.server.url}/#/t/${ids.copy}`);
    await s.heading('sdxl worker (copy)').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Delete' }).isDisabled(), false);
    assert.equal(await page.getByRole('link', { name: 'Create an endpoint' }).count(), 1, 'bindable again');
  });

  test('an endpoint is edited: renamed with other workers, a taken name refused by the field, a rebind confirmed first', async () => {
    const { page } = s;
    const a = s.keys.alice as string;
    const canary = (await s.api(a, 'POST', '/v1/templates', { name: 'canary worker', imageName: 'acme/sdxl:1.1', isServerless: true })).id;
    await s.api(a, 'POST', '/v1/endpoints', { name: 'sdxl-canary', templateId: canary });
    const endpoint = () => s.api<Record<string, unknown>>(a, 'GET', `/v1/endpoints/${ids.endpoint}`);
    const releases = async () =>
      (await s.api<{ version: number; status: string }[]>(a, 'GET', `/v1/endpoints/${ids.endpoint}/releases`)).map((r) => [
        r.version,
        r.status,
      ]);
    await page.goto(`${s.server.url}/#/e/${ids.endpoint}`);
    await s.heading('Endpoint sdxl-prod').waitFor();
    await page.getByRole('link', { name: 'Edit endpoint' }).click();
    await s.heading('Edit sdxl-prod').waitFor();
    const name = page.getByLabel('Name');
    assert.equal(await name.inputValue(), 'sdxl-prod');
    assert.equal(await page.getByLabel('Template').inputValue(), ids.worker);
    assert.deepEqual(await page.getByLabel('Template').locator('option').allTextContents(), ['sdxl worker', 'sdxl worker (copy)']);
    assert.equal(await page.getByLabel('Workers kept running').inputValue(), '0');
    assert.equal(await page.getByLabel('Most workers at once').inputValue(), '4');

    // A name another endpoint has: the 409 goes next to the name.
    await name.fill('sdxl-canary');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('.summary .problem').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    const messageId = (await name.getAttribute('aria-describedby'))?.split(' ').at(-1);
    assert.equal(await page.locator(`[id="${messageId}"]`).textContent(), 'is already the name of another of your endpoints');

    // Unsaved changes: Cancel asks first, and staying keeps them.
    const leaving = answerConfirm(false);
    await page.getByRole('link', { name: 'Cancel' }).click();
    assert.match(await leaving, /Your changes are not saved/);
    assert.equal(await name.inputValue(), 'sdxl-canary');

    await name.fill('sdxl-main');
    await page.getByLabel('Workers kept running').fill('1');
    await page.getByLabel('Most workers at once').fill('6');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await s.heading('Endpoint sdxl-main').waitFor();
    assert.match((await page.locator('.fields').textContent()) ?? '', /Workers1 to 6/);
    const renamed = await endpoint();
    assert.deepEqual([renamed.name, renamed.workersMin, renamed.workersMax, renamed.version], ['sdxl-main', 1, 6, 2]);
    assert.deepEqual(await releases(), [[2, 'completed']], 'a rename starts no release');

    // A rebind starts a rolling release: the form says so and asks first.
    await page.getByRole('link', { name: 'Edit endpoint' }).click();
    await s.heading('Edit sdxl-main').waitFor();
    await page.getByLabel('Template').selectOption({ label: 'sdxl worker (copy)' });
    await page.getByRole('button', { name: 'Save changes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rebind sdxl-main to sdxl worker (copy)?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', /starts a rolling release on endpoint sdxl-main/);
    await s.shot('live-06-rebind-confirm', 'ui-rebind-confirm.png');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await endpoint()).templateId, ids.worker, 'nothing was saved');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByRole('button', { name: 'Save and start the release' }).click();
    await s.heading('Endpoint sdxl-main').waitFor();
    assert.equal(await page.locator('.fields a').first().textContent(), 'sdxl worker (copy)');
    const latest = page.locator('.releases > li').first();
    await latest.getByRole('heading', { name: 'Release 3' }).waitFor();
    assert.equal(await latest.locator('.status').textContent(), 'pending');
    assert.equal((await endpoint()).templateId, ids.copy);
    assert.deepEqual(await releases(), [
      [3, 'pending'],
      [2, 'completed'],
    ]);
  });

  test('no screen broke the Content-Security-Policy or threw', () => {
    // The refused endpoint's 400 and the taken name's 409 are the failures the test provoked.
    const unexpected = s.consoleErrors.filter((text) => !/^Failed to load resource: .*status of (400|409) /.test(text));
    assert.deepEqual(unexpected, []);
  });
});
