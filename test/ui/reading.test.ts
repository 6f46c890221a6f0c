import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserPresent, openSession, type Session } from './harness.ts';

// Reading and reusing templates: a readme's table of contents scrolls to its headings, without leaving the template;
// the id, the image and code blocks copy; another account's template is duplicated into yours; a form with changes
// not saved asks before it is left.

const hasBrowser = browserPresent('reading and reusing templates in the web UI');

const README = `# ComfyUI

## Contents

- [Usage](#usage)
- [Models and LoRAs](#models-and-loras)
- [Usage again](#usage-1)

${'Filler paragraph to push the headings below the fold.\n\n'.repeat(40)}

## Usage

\`\`\`sh
python main.py --listen 0.0.0.0
\`\`\`

${'More filler.\n\n'.repeat(30)}

## Models and LoRAs

<h2 id="main" name="status">Clobbering</h2>

## Usage

The second one.
`;

describe('reading and reusing templates in the web UI', { skip: !hasBrowser }, () => {
  let s: Session;
  let comfy = '';
  const readme = () => s.page.locator('.readme');
  /** Where an element is against the viewport: in view when its top is within it. */
  const inView = (selector: string) =>
    s.page.locator(selector).evaluate((el) => {
      const top = el.getBoundingClientRect().top;
      return top >= 0 && top < window.innerHeight;
    });

  before(async () => {
    s = await openSession(['alice', 'bob']);
    comfy = (
      await s.api(s.keys.alice as string, 'POST', '/v1/templates', {
        name: 'comfy ui',
        imageName: 'acme/comfy:0.3',
        isPublic: true,
        env: { COMFY_ARGS: '--listen' },
        ports: ['8188/http'],
        readme: README,
      })
    ).id;
    await s.signIn(s.keys.bob as string);
  });
  after(async () => {
    await s?.close();
  });

  test('headings get prefixed ids; the contents scroll to them and the URL stays the template’s', async () => {
    const { page } = s;
    const url = `${s.server.url}/#/t/${comfy}`;
    await page.goto(url);
    await s.heading('comfy ui').waitFor();
    const ids = await readme()
      .locator('h1, h2')
      .evaluateAll((hs) => hs.map((h) => h.id));
    assert.deepEqual(ids, [
      'user-content-comfyui',
      'user-content-contents',
      'user-content-usage',
      'user-content-models-and-loras',
      'user-content-clobbering',
      'user-content-usage-1',
    ]);
    // The author's own id and name are dropped: nothing in the readme shadows the page's #main or #status.
    assert.equal(await page.evaluate(() => document.getElementById('main')?.tagName), 'MAIN');
    assert.equal(await readme().locator('[name]').count(), 0);

    assert.equal(await inView('#user-content-models-and-loras'), false);
    await readme().getByRole('link', { name: 'Models and LoRAs' }).click();
    await page.waitForFunction(() => document.activeElement?.id === 'user-content-models-and-loras');
    assert.equal(await inView('#user-content-models-and-loras'), true);
    assert.equal(page.url(), url, 'still on the template');
    await s.heading('comfy ui').waitFor();
    await readme().getByRole('link', { name: 'Usage again' }).click();
    await page.waitForFunction(() => document.activeElement?.id === 'user-content-usage-1');
    assert.equal(await inView('#user-content-usage-1'), true);
    assert.equal(page.url(), url);
  });

  test('the id, the image and a code block copy to the clipboard', async () => {
    const { page } = s;
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    await page.evaluate(() => window.scrollTo(0, 0));
    assert.equal(await page.locator('.fields code.template-id').textContent(), comfy);
    await page.getByRole('button', { name: 'Copy template ID' }).click();
    await page.getByRole('button', { name: 'Copy template ID' }).filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await clipboard(), comfy);
    await page.getByRole('button', { name: 'Copy image' }).click();
    await page.getByRole('button', { name: 'Copy image' }).filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await clipboard(), 'acme/comfy:0.3');
    await page.getByRole('button', { name: 'Copy code block 1' }).click();
    await page.getByRole('button', { name: 'Copy code block 1' }).filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await clipboard(), 'python main.py --listen 0.0.0.0\n');
    await page.evaluate(() => window.scrollTo(0, 0));
    await s.shot('reading-01-template', 'ui.png');
  });

  test('Bob duplicates Alice’s template into his account, private, under the name he types', async () => {
    const { page } = s;
    assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0, 'not Bob’s to edit');
    await page.getByRole('link', { name: 'Duplicate' }).click();
    await s.heading('Duplicate comfy ui').waitFor();
    const name = page.getByLabel('Name', { exact: true });
    assert.equal(await name.inputValue(), 'comfy ui (copy)');
    assert.equal(await page.getByLabel('Public').isChecked(), false);
    await name.fill('my comfy');
    await page.getByRole('button', { name: 'Create template' }).click();
    await s.heading('my comfy').waitFor();
    const id = /#\/t\/([^/?]+)/.exec(page.url())?.[1] ?? '';
    const copy = await s.api<Record<string, unknown>>(s.keys.bob as string, 'GET', `/v1/templates/${id}`);
    assert.notEqual(id, comfy);
    assert.deepEqual(
      [copy.imageName, copy.env, copy.ports, copy.readme, copy.isPublic, copy.revision],
      ['acme/comfy:0.3', { COMFY_ARGS: '--listen' }, ['8188/http'], README, false, 1],
    );
    await page.getByRole('link', { name: 'Edit' }).waitFor();
  });

  test('leaving a form with unsaved changes asks first, in the app and on reload; unchanged, it does not', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Edit' }).click();
    await s.heading('Edit my comfy').waitFor();
    const editUrl = page.url();
    // Unchanged: leaving asks nothing (a dialog would be dismissed, and the page would stay).
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await s.heading('Endpoints').waitFor();
    await page.goBack();
    await s.heading('Edit my comfy').waitFor();

    await page.getByLabel('Image').fill('acme/comfy:0.4');
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.dismiss();
      }),
    );
    await page.getByRole('link', { name: 'Endpoints' }).click();
    assert.equal(await asked, 'Leave this page? Your changes are not saved.');
    // The dialog opens while the hash has already changed; once dismissed, the screen's URL is put back.
    await page.waitForURL(editUrl);
    assert.equal(page.url(), editUrl, 'stayed');
    assert.equal(await page.getByLabel('Image').inputValue(), 'acme/comfy:0.4', 'the change is still there');

    // A reload: the browser's own question (beforeunload); dismissed, the page stays as it was.
    const beforeUnload = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.type());
        void dialog.dismiss();
      }),
    );
    void page.reload().catch(() => undefined);
    assert.equal(await beforeUnload, 'beforeunload');
    assert.equal(await page.getByLabel('Image').inputValue(), 'acme/comfy:0.4');

    // Saved, nothing is unsaved: the next screen comes without a question.
    await page.getByRole('button', { name: 'Save changes' }).click();
    await s.heading('my comfy').waitFor();
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await s.heading('Endpoints').waitFor();
  });

  test('no screen broke the Content-Security-Policy or threw', () => {
    // Bob's look at Alice's revisions (403) is how the UI learns the template is not his to edit.
    const unexpected = s.consoleErrors.filter((text) => !/^Failed to load resource: .*status of 403 /.test(text));
    assert.deepEqual(unexpected, []);
  });
});
