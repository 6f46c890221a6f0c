import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';
import { ensureUiBuilt } from './built.ts';

// The web UI from a user's side: Debian's Chromium, driven by playwright-core, against a real `podplate serve` on a
// SQLite file. Each screen is saved under test-results/. Without /usr/bin/chromium the file is skipped, loudly,
// unless REQUIRE_BROWSER=1 (as in CI), where that is a failure.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const hasBrowser = existsSync(CHROMIUM);

if (!hasBrowser) {
  if (process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} does not exist: install it (apt-get install -y chromium).`);
  process.stderr.write(`\n*** ${CHROMIUM} is missing: the browser test of the web UI is SKIPPED (apt-get install -y chromium). ***\n\n`);
  // Also in the runner's summary ("skipped 1"), where it can't be missed.
  test('the web UI in a browser', { skip: `${CHROMIUM} is not installed` });
}

const XSS_README = [
  '# Nothing to see',
  '<script>window.__xss=1</script>',
  '<img src=x onerror="window.__xss=1">',
  '[a](javascript:window.__xss=1)',
  '<a href="javascript:window.__xss=1">b</a>',
  '<iframe src="javascript:window.__xss=1"></iframe>',
  '<div onclick="window.__xss=1" style="position:fixed;inset:0">c</div>',
].join('\n\n');

const REGISTRY_PASSWORD = 'ghp_browser-sentinel-5a1e';

// Links that must go nowhere, whatever browsers make of them, and links that may stay.
const HOSTILE_LINKS = {
  'markdown backslash': '[markdown backslash](/\\evil.example/)',
  'html backslash': '<a href="/\\evil.example/">html backslash</a>',
  'double backslash': '<a href="\\\\evil.example">double backslash</a>',
  'protocol-relative': '<a href="//evil.example">protocol-relative</a>',
  'markdown protocol-relative': '[markdown protocol-relative](//evil.example/x)',
  'slash tab slash': '<a href="/&#9;/evil.example">slash tab slash</a>',
  'spaced backslash': '<a href="  /\\evil.example">spaced backslash</a>',
  javascript: '<a href="javascript:window.__xss=1">javascript</a>',
  'split javascript': '<a href="java&#x09;script:window.__xss=1">split javascript</a>',
  data: '<a href="data:text/html,<h1>evil</h1>">data</a>',
  'other scheme': '<a href="ftp://evil.example/">other scheme</a>',
};
const LINKS_README = [
  '# Links',
  ...Object.values(HOSTILE_LINKS),
  '[fragment](#usage) [docs](/docs) [relative](setup.md) [site](https://example.com) [mail](mailto:ops@example.com)',
].join('\n\n');

const NOTEBOOK_README = `# PyTorch notebook

A **Jupyter** notebook with PyTorch.

- CUDA 11.8
- Python 3.10

\`\`\`sh
jupyter lab --ip 0.0.0.0
\`\`\`

See [the docs](https://pytorch.org/docs).
`;

describe('the web UI in a browser', { skip: !hasBrowser }, () => {
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const keys = { alice: '', bob: '', carol: '', platform: '' };
  const ids: Record<string, string> = {};
  const consoleErrors: string[] = [];
  const urls: string[] = [];

  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    assert.ok(response.ok, `${method} ${path}: ${JSON.stringify(json)}`);
    return json as { id: string } & Record<string, unknown>;
  };
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** The screen's own heading (a readme may have headings of its own, after it). */
  const heading = (text: string | RegExp) => page.locator('main h1').first().filter({ hasText: text });
  /**
   * The names the template list shows, once they are `expected` (or after 10 s, whatever they are then). A list is
   * re-rendered after its URL changes (on hashchange, then its fetch), so the list seen right after the URL may be the
   * one before, or none while the next loads.
   */
  const listed = async (expected: string[], { sorted = false, message = '' } = {}) => {
    const read = async () => {
      const names = await page.locator('.templates .name').allTextContents();
      return sorted ? names.sort() : names;
    };
    const deadline = Date.now() + 10_000;
    let names = await read();
    while (!isDeepStrictEqual(names, expected) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      names = await read();
    }
    assert.deepEqual(names, expected, message);
  };

  before(async () => {
    ensureUiBuilt();
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'podplate-ui-'));
    // More revisions kept than the default 100, so that a long history has a second page (REVISIONS_KEPT_PER_TEMPLATE).
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'podplate.db')}`,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      REVISIONS_KEPT_PER_TEMPLATE: '1000',
    };
    server = await startServer(env);
    keys.platform = server.firstKey() ?? '';
    assert.ok(keys.platform, 'the bootstrap platform key is printed');
    for (const user of ['alice', 'bob', 'carol'] as const) {
      const made = podplate(['keys', 'create', '--user', user], env);
      assert.equal(made.code, 0, made.stderr);
      keys[user] = made.stdout.trim();
    }

    // Alice's own templates, Bob's public one, an official one, and a Serverless template bound to an endpoint.
    const a = keys.alice;
    ids.notebook = (
      await api(a, 'POST', '/v1/templates', {
        name: 'pytorch notebook',
        imageName: 'runpod/pytorch:2.1.0-py3.10',
        ports: ['8888/http', '22/tcp'],
        env: { JUPYTER_PASSWORD: 'secret' },
        readme: NOTEBOOK_README,
      })
    ).id;
    ids.xss = (
      await api(a, 'POST', '/v1/templates', { name: 'hostile readme', imageName: 'acme/hostile:1', category: 'CPU', readme: XSS_README })
    ).id;
    ids.worker = (
      await api(a, 'POST', '/v1/templates', { name: 'llama worker', imageName: 'acme/llama:1.0', category: 'AMD', isServerless: true })
    ).id;
    ids.endpoint = (await api(a, 'POST', '/v1/endpoints', { name: 'llama', templateId: ids.worker, workersMax: 4 })).id;
    await api(a, 'POST', `/v1/templates/${ids.worker}/update`, { imageName: 'acme/llama:1.1' });
    await api(a, 'POST', `/v1/templates/${ids.worker}/update`, { imageName: 'acme/llama:1.2' });
    ids.bob = (
      await api(keys.bob, 'POST', '/v1/templates', {
        name: 'stable diffusion',
        imageName: 'bob/sd:xl',
        isPublic: true,
        readme: 'Bob says hi.',
      })
    ).id;
    await api(keys.bob, 'POST', '/v1/templates', { name: 'bob private', imageName: 'bob/private:1' });
    ids.official = (
      await api(keys.platform, 'POST', '/v1/templates', {
        name: 'Official PyTorch',
        imageName: 'runpod/pytorch:2.4.0',
        isPublic: true,
        readme: '## Maintained by the platform',
      })
    ).id;

    // More public templates than a page holds (20), newest first: Carol's 21 come before Bob's.
    for (let i = 1; i <= 21; i++) {
      await api(keys.carol, 'POST', '/v1/templates', {
        name: `carol public ${String(i).padStart(2, '0')}`,
        imageName: 'carol/x:1',
        isPublic: true,
      });
    }

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: 120_000,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) urls.push(frame.url());
    });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('sign in: a wrong key is refused next to the field; a good one opens Mine', async () => {
    await page.goto(`${server.url}/`);
    await assert.doesNotReject(heading('Sign in').waitFor());
    await shot('01-sign-in');
    const field = page.getByLabel('API key');
    await field.fill('pp_not-a-real-key');
    await field.press('Enter');
    await page.locator('#api-key-error').filter({ hasText: /./ }).waitFor();
    assert.equal(await field.getAttribute('aria-invalid'), 'true');

    await field.fill(keys.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Templates').waitFor();
    await listed(['hostile readme', 'llama worker', 'pytorch notebook'], { sorted: true });
    assert.equal(await page.getByRole('tab', { name: 'Mine' }).getAttribute('aria-selected'), 'true');
    // The key is kept in this tab's sessionStorage, and nowhere else.
    assert.equal(await page.evaluate(() => sessionStorage.getItem('podplate.apiKey')), keys.alice);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.deepEqual(await context.cookies(), []);
    await shot('02-list-mine');
  });

  test('filter by category, by Pod/Serverless and by search; tabs by keyboard; paging through Public; Official', async () => {
    await page.getByLabel('Category').selectOption('AMD');
    await page.waitForURL(/category=AMD/);
    await listed(['llama worker']);
    await page.getByLabel('Category').selectOption('');
    await page.waitForURL((url) => !url.hash.includes('category='));
    await page.getByLabel('Type').selectOption('pod');
    await page.waitForURL(/kind=pod/);
    await listed(['hostile readme', 'pytorch notebook'], { sorted: true });
    await page.getByLabel('Search').fill('PYTORCH');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(/q=PYTORCH/);
    await listed(['pytorch notebook']);
    await shot('03-list-filtered');

    // Clear the filters, then move through the tabs with the arrow keys.
    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL((url) => !url.hash.includes('q=') && !url.hash.includes('kind='));
    await listed(['hostile readme', 'llama worker', 'pytorch notebook'], { sorted: true });
    await page.getByRole('tab', { name: 'Mine' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/tab=public/);
    await page.getByRole('tab', { name: 'Public', selected: true }).waitFor();
    /** Waits until the selected tab, drawn anew, holds the focus (a keyboard user's next arrow moves from it). */
    const tabFocused = (name: string) =>
      page.waitForFunction(
        (label) => {
          const focused = document.activeElement;
          return (
            focused?.getAttribute('role') === 'tab' && focused.getAttribute('aria-selected') === 'true' && focused.textContent === label
          );
        },
        name,
        { timeout: 10_000 },
      );
    await tabFocused('Public');
    const carols = Array.from({ length: 21 }, (_, i) => `carol public ${String(21 - i).padStart(2, '0')}`);
    await listed(carols.slice(0, 20), { message: 'a page of 20, newest first' });
    await shot('04-list-public');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await page.getByRole('button', { name: 'Previous page' }).waitFor();
    await listed(['carol public 01', 'stable diffusion'], { message: 'public ones only: not Bob’s private one, not official ones' });
    // Somebody else's template can be read, not edited.
    await page.getByRole('link', { name: /stable diffusion/ }).click();
    await heading('stable diffusion').waitFor();
    await page.locator('.readme p').filter({ hasText: 'Bob says hi.' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0);
    await page.goBack();
    await listed(['carol public 01', 'stable diffusion']);
    assert.equal(await page.getByRole('button', { name: 'Next page' }).count(), 0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.waitForURL((url) => !url.hash.includes('cursor='));
    await page.getByRole('button', { name: 'Next page' }).waitFor();
    await listed(carols.slice(0, 20));
    await page.getByRole('tab', { name: 'Public' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/tab=official/);
    await listed(['Official PyTorch']);
    await tabFocused('Official');
    await page.keyboard.press('ArrowLeft');
    await page.waitForURL(/tab=public/);
    await tabFocused('Public');
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/tab=official/);
    await listed(['Official PyTorch']);
    await shot('05-list-official');
  });

  test('opening a template shows its fields and its readme rendered as Markdown', async () => {
    await page.getByRole('tab', { name: 'Mine' }).click();
    await page.getByRole('link', { name: /pytorch notebook/ }).click();
    await heading('pytorch notebook').waitFor();
    const readme = page.locator('.readme');
    assert.equal(await readme.locator('h1').textContent(), 'PyTorch notebook');
    assert.equal(await readme.locator('strong').textContent(), 'Jupyter');
    assert.equal(await readme.locator('li').count(), 2);
    assert.match((await readme.locator('pre code').textContent()) ?? '', /jupyter lab/);
    const link = readme.getByRole('link', { name: 'the docs' });
    assert.equal(await link.getAttribute('href'), 'https://pytorch.org/docs');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer nofollow');
    const fields = `${await page.locator('.fields').textContent()} ${await page.locator('.env-card').textContent()}`;
    for (const expected of ['runpod/pytorch:2.1.0-py3.10', '8888/http', '22/tcp', 'JUPYTER_PASSWORD', 'NVIDIA', 'Pod']) {
      assert.ok(fields?.includes(expected), expected);
    }
    await shot('06-template');
  });

  test('a hostile readme does nothing: no script, no handler, no javascript: link', async () => {
    const errorsBefore = consoleErrors.length;
    await page.goto(`${server.url}/#/t/${ids.xss}`);
    await heading('hostile readme').waitFor();
    const readme = page.locator('.readme');
    await readme.locator('h1').waitFor();
    assert.equal(await readme.locator('script, iframe, [onerror], [onclick], [style]').count(), 0);
    const hrefs = await readme.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    assert.ok(
      hrefs.every((href) => href === null || !/^\s*javascript:/i.test(href)),
      String(hrefs),
    );
    for (const name of ['a', 'b', 'c']) await readme.getByText(name, { exact: true }).click();
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
    // Chromium reports the handlers and the style it met while the sanitizer parsed the readme as CSP violations
    // (parsed in an inert document, never run, then removed); nothing else went wrong.
    const during = consoleErrors.splice(errorsBefore);
    assert.ok(
      during.every((text) => /Content Security Policy/.test(text)),
      during.join('\n'),
    );
    assert.match(page.url(), new RegExp(`#/t/${ids.xss}$`), 'the links went nowhere');
    await shot('07-hostile-readme');
  });

  test('registry credentials: a refused name is shown next to its field; added, they are listed and the password is gone', async () => {
    await page.getByRole('link', { name: 'Registry credentials' }).click();
    await heading('Registry credentials').waitFor();
    await page.locator('p.muted').filter({ hasText: 'You have no registry credentials.' }).waitFor();
    await page.getByLabel('Username').fill('octocat');
    await page.getByLabel('Password or token').fill(REGISTRY_PASSWORD);
    await page.getByRole('button', { name: 'Add credentials' }).click();
    const name = page.getByLabel('Name', { exact: true });
    await page.locator('.summary .problem').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    const describedBy = (await name.getAttribute('aria-describedby')) ?? '';
    assert.equal(await page.locator(`[id="${describedBy.split(' ').pop()}"]`).textContent(), 'must not be empty');
    await shot('17-registry-credentials-error');

    await name.fill('ghcr');
    await page.getByRole('button', { name: 'Add credentials' }).click();
    await page.locator('table.registry-auths .name').filter({ hasText: 'ghcr' }).waitFor();
    assert.match((await page.locator('#status').textContent()) ?? '', /Added ghcr/);
    assert.equal(await page.getByLabel('Password or token').inputValue(), '', 'the form is emptied');
    assert.equal(await page.getByLabel('Password or token').getAttribute('type'), 'password');
    assert.equal((await page.content()).includes(REGISTRY_PASSWORD), false, 'the password is nowhere on the page');
    const [auth] = (await api(keys.alice, 'GET', '/v1/containerregistryauth')) as unknown as { id: string; name: string }[];
    assert.equal(auth?.name, 'ghcr');
    ids.auth = auth?.id ?? '';
    const read = await api(keys.platform, 'GET', `/v1/containerregistryauth/${ids.auth}/credentials`);
    assert.deepEqual(read, { username: 'octocat', password: REGISTRY_PASSWORD });
    await shot('18-registry-credentials');
  });

  test('create: a bad port is refused next to its row; fixed, the template is saved', async () => {
    // One "New template" in the top bar: the templates list's.
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await heading('Templates').waitFor();
    await page.getByRole('link', { name: 'New template' }).click();
    await heading('New template').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('comfy ui');
    await page.getByLabel('Image').fill('acme/comfy:0.3');
    await page.getByLabel('Category').selectOption('NVIDIA');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name 1').fill('COMFY_ARGS');
    await page.getByLabel('Value 1').fill('--listen');
    await page.getByRole('button', { name: 'Add port' }).click();
    await page.getByLabel('Port 1', { exact: true }).fill('70000');
    await page.getByLabel('Protocol 1').selectOption('tcp');
    await page.getByLabel('Readme (Markdown)').fill('# Comfy\n\nNodes *all the way* down.');
    // The select offers the caller's own registry credentials, by name.
    const registryAuth = page.getByLabel('Registry auth');
    assert.deepEqual(await registryAuth.locator('option').allTextContents(), ['None (a public image)', 'ghcr']);
    await registryAuth.selectOption({ label: 'ghcr' });
    await page.getByRole('button', { name: 'Create template' }).click();

    const port = page.getByLabel('Port 1', { exact: true });
    await page.locator('.summary .problem').waitFor();
    assert.equal(await port.getAttribute('aria-invalid'), 'true');
    const describedBy = (await port.getAttribute('aria-describedby')) ?? '';
    const message = await page.locator(`[id="${describedBy.split(' ').pop()}"]`).textContent();
    assert.equal(message, 'must be a whole number from 1 to 65535');
    assert.match((await page.locator('.summary').textContent()) ?? '', /Port 1: must be/);
    await shot('08-create-error');

    await port.fill('8188');
    await page.getByRole('button', { name: 'Create template' }).click();
    await heading('comfy ui').waitFor();
    const fields = (await page.locator('.fields').textContent()) ?? '';
    assert.ok(fields.includes('8188/tcp'), fields);
    assert.match((await page.locator('.env-card').textContent()) ?? '', /COMFY_ARGS/);
    assert.ok(fields.includes(`Registry authghcr ${ids.auth}`), fields);
    assert.equal(await page.locator('.readme em').textContent(), 'all the way');
    ids.comfy = /#\/t\/([^/?]+)/.exec(page.url())?.[1] ?? '';
    assert.ok(ids.comfy);
    await shot('09-created');
  });

  test('edit: a save over somebody else’s change is refused (412) and offers a reload; then saved as revision 3', async () => {
    await page.getByRole('link', { name: 'Edit' }).click();
    await heading('Edit comfy ui').waitFor();
    assert.equal(await page.getByLabel('Category').isDisabled(), true, 'category is fixed after creation');
    assert.equal(await page.getByLabel('Registry auth').inputValue(), ids.auth, 'the form shows the auth in use');
    const edit = async () => {
      await page.getByLabel('Image').fill('acme/comfy:0.4');
      await page.getByRole('button', { name: 'Add port' }).click();
      await page.getByLabel('Port 2', { exact: true }).fill('8888');
    };
    await edit();
    // Meanwhile, the same template changes elsewhere (revision 2).
    await api(keys.alice, 'PATCH', `/v1/templates/${ids.comfy}`, { readme: '# Comfy\n\nChanged elsewhere.' });
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('.summary').filter({ hasText: 'Someone changed this template since you opened it' }).waitFor();
    await shot('10-edit-conflict');
    await page.getByRole('link', { name: 'Reload it' }).click();
    await page.waitForFunction(() =>
      document.querySelector<HTMLTextAreaElement>('textarea[name="readme"]')?.value.includes('Changed elsewhere.'),
    );
    assert.equal(await page.getByLabel('Image').inputValue(), 'acme/comfy:0.3', 'the form shows the template as it is now');

    await edit();
    await shot('11-edit');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await heading('comfy ui').waitFor();
    const fields = (await page.locator('.fields').textContent()) ?? '';
    assert.ok(fields.includes('acme/comfy:0.4') && fields.includes('8888/http'), fields);
    assert.match(fields, /Revision3,/);
    assert.match((await page.locator('#status').textContent()) ?? '', /revision 3/);
    assert.equal(await page.locator('.readme p').textContent(), 'Changed elsewhere.', 'the other change was kept');
  });

  test('history shows each revision’s diff; rolling back to revision 1 makes revision 4 equal to it', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    await heading('History of comfy ui').waitFor();
    const latest = page.locator('.revisions > li').first();
    assert.match((await latest.locator('h2').textContent()) ?? '', /Revision 3/);
    const diff = (await latest.locator('table.diff').textContent()) ?? '';
    assert.ok(diff.includes('Image') && diff.includes('acme/comfy:0.3') && diff.includes('acme/comfy:0.4'), diff);
    assert.ok(diff.includes('Ports'), diff);
    assert.match((await page.locator('.revisions > li').nth(1).locator('table.diff').textContent()) ?? '', /Readme/);
    await shot('12-history');

    await page.getByRole('button', { name: 'Roll back to revision 1' }).click();
    await page.locator('.revisions > li h2').filter({ hasText: 'Revision 4' }).waitFor();
    assert.match((await page.locator('#status').textContent()) ?? '', /Rolled back to revision 1: now revision 4/);
    const rolled = await api(keys.alice, 'GET', `/v1/templates/${ids.comfy}`);
    assert.equal(rolled.imageName, 'acme/comfy:0.3');
    assert.deepEqual(rolled.ports, ['8188/tcp']);
    assert.equal(rolled.readme, '# Comfy\n\nNodes *all the way* down.');
    assert.equal(rolled.revision, 4);
    await shot('13-rolled-back');
  });

  test('a long history pages: the older revisions load below the first hundred', async () => {
    const long = await api(keys.alice, 'POST', '/v1/templates', { name: 'long history', imageName: 'acme/long:1' });
    for (let i = 1; i <= 104; i++) await api(keys.alice, 'PATCH', `/v1/templates/${long.id}`, { readme: `change ${i}` });
    await page.goto(`${server.url}/#/t/${long.id}/history`);
    await heading('History of long history').waitFor();
    assert.equal(await page.locator('.revisions > li').count(), 100);
    await page.getByRole('button', { name: 'Older revisions' }).click();
    await page
      .locator('.revisions > li h2')
      .filter({ hasText: /^Revision 1$/ })
      .waitFor();
    assert.equal(await page.locator('.revisions > li').count(), 105);
    assert.equal(await page.getByRole('button', { name: 'Older revisions' }).count(), 0, 'no page after the last');
    const removed = await fetch(`${server.url}/v1/templates/${long.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${keys.alice}` },
    });
    assert.equal(removed.status, 204);
  });

  test('credentials a template uses are not removed: the page says which template uses them', async () => {
    // Bob sees Alice's template without the id of her credentials.
    await api(keys.alice, 'PATCH', `/v1/templates/${ids.comfy}`, { isPublic: true });
    const seen = await api(keys.bob, 'GET', `/v1/templates/${ids.comfy}?includePublicTemplates=true`);
    assert.equal(seen.containerRegistryAuthId, '');
    await page.getByRole('link', { name: 'Registry credentials' }).click();
    await heading('Registry credentials').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove ghcr' }).click();
    await page.locator('.problem').filter({ hasText: 'Templates still use this registry auth' }).waitFor();
    assert.match((await page.locator('.problem').textContent()) ?? '', new RegExp(`${ids.comfy} \\("comfy ui"\\)`));
    assert.equal(await page.locator('table.registry-auths .name').count(), 1, 'still listed');
    await shot('19-registry-credentials-in-use');
  });

  test('an endpoint shows its releases with their status', async () => {
    // The orchestrator (a platform key) reports the newest release rolling; the one before it was superseded.
    const [newest] = (await api(keys.alice, 'GET', `/v1/endpoints/${ids.endpoint}/releases`)) as unknown as { id: string }[];
    await api(keys.platform, 'POST', `/v1/endpoints/${ids.endpoint}/releases/${newest?.id}/progress`, {
      status: 'rolling',
      workersUpdated: 1,
      workersTotal: 4,
    });
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await heading('Endpoints').waitFor();
    await page.getByRole('link', { name: 'llama', exact: true }).click();
    await heading('Endpoint llama').waitFor();
    assert.equal(await page.locator('.fields a').textContent(), 'llama worker');
    const [latest, before] = [page.locator('.releases > li').nth(0), page.locator('.releases > li').nth(1)];
    assert.match((await latest.locator('h2').textContent()) ?? '', /Release 3/);
    assert.equal(await latest.locator('.status').textContent(), 'rolling');
    assert.match((await latest.textContent()) ?? '', /Workers updated: 1 of 4/);
    assert.ok(((await latest.locator('table.diff').textContent()) ?? '').includes('acme/llama:1.2'));
    assert.match((await before.locator('h2').textContent()) ?? '', /Release 2/);
    assert.equal(await before.locator('.status').textContent(), 'superseded');
    await shot('14-endpoint-releases');
  });

  test('on a narrow screen the list and a template fit without sideways scrolling', async () => {
    await page.setViewportSize({ width: 380, height: 800 });
    await page.goto(`${server.url}/#/`);
    await page.locator('.templates').waitFor();
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(await overflow(), 0);
    await shot('15-narrow-list');
    await page.goto(`${server.url}/#/t/${ids.notebook}`);
    await page.locator('.readme h1').waitFor();
    assert.equal(await overflow(), 0);
    await shot('16-narrow-template');
    await page.setViewportSize({ width: 1200, height: 800 });
  });

  test('delete asks first; confirmed, the template is gone from the list', async () => {
    await page.goto(`${server.url}/#/t/${ids.comfy}`);
    await heading('comfy ui').waitFor();
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Delete' }).click();
    await heading('comfy ui').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await heading('Templates').waitFor();
    await listed(['hostile readme', 'llama worker', 'pytorch notebook'], { sorted: true });
    assert.match((await page.locator('#status').textContent()) ?? '', /Deleted comfy ui/);
  });

  test('once no template uses them, the credentials are removed, after a confirmation', async () => {
    await page.getByRole('link', { name: 'Registry credentials' }).click();
    await heading('Registry credentials').waitFor();
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Remove ghcr' }).click();
    assert.equal(await page.locator('table.registry-auths .name').count(), 1, 'dismissed: kept');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove ghcr' }).click();
    await page.locator('p.muted').filter({ hasText: 'You have no registry credentials.' }).waitFor();
    assert.match((await page.locator('#status').textContent()) ?? '', /Removed ghcr/);
    assert.deepEqual(await api(keys.alice, 'GET', '/v1/containerregistryauth'), []);
  });

  test('readme links go to http(s), mailto, a fragment or this origin only: none of the others leaves the site', async () => {
    const offSite: string[] = [];
    context.on('request', (request) => {
      if (new URL(request.url()).hostname === 'evil.example') offSite.push(request.url());
    });
    await context.route(/evil\.example/, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>evil</h1>' }));
    const links = await api(keys.alice, 'POST', '/v1/templates', {
      name: 'hostile links',
      imageName: 'acme/links:1',
      readme: LINKS_README,
    });
    const errorsBefore = consoleErrors.length;
    const readmePage = `${server.url}/#/t/${links.id}`;
    await page.goto(readmePage);
    await heading('hostile links').waitFor();
    const readme = page.locator('.readme');
    await readme.getByText('mail', { exact: true }).waitFor();
    const hrefs = Object.fromEntries(
      await readme.locator('a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')])),
    );
    assert.deepEqual(hrefs, {
      // marked writes the backslash of a Markdown link as %5C: a path on this origin, not a way off it.
      'markdown backslash': `${server.url}/%5Cevil.example/`,
      'html backslash': null,
      'double backslash': null,
      'protocol-relative': null,
      'markdown protocol-relative': null,
      'slash tab slash': null,
      'spaced backslash': null,
      javascript: null,
      'split javascript': null,
      data: null,
      'other scheme': null,
      fragment: '#usage',
      docs: `${server.url}/docs`,
      relative: `${server.url}/setup.md`,
      site: 'https://example.com/',
      mail: 'mailto:ops@example.com',
    });
    await shot('17-readme-links');
    for (const name of Object.keys(HOSTILE_LINKS)) {
      await readme.getByText(name, { exact: true }).click();
      assert.equal(new URL(page.url()).origin, server.url, `${name} stayed on the site`);
      if (page.url() !== readmePage) {
        await page.goto(readmePage);
        await readme.getByText('mail', { exact: true }).waitFor();
      }
    }
    assert.deepEqual(offSite, [], 'no request left for evil.example');
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
    // The one link that went anywhere went to this origin's 404.
    const during = consoleErrors.splice(errorsBefore);
    assert.ok(
      during.every((text) => /status of 404/.test(text)),
      during.join('\n'),
    );
    const removed = await fetch(`${server.url}/v1/templates/${links.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${keys.alice}` },
    });
    assert.equal(removed.status, 204);
  });

  test('the API reference at /docs works under its Content-Security-Policy, and no page may frame it', async () => {
    const errorsBefore = consoleErrors.length;
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').filter({ hasText: 'Podplate' }).waitFor();
    await page.locator('.opblock-summary-path').filter({ hasText: '/v1/templates/{templateId}/rollback' }).first().waitFor();
    await shot('18-docs');
    assert.deepEqual(consoleErrors.splice(errorsBefore), [], 'no Content-Security-Policy violation, no error');

    // Framed by a page of its own origin (the UI, whose policy allows same-origin frames), /docs refuses to show.
    await page.goto(`${server.url}/`);
    await page.locator('main h1').first().waitFor();
    const refused = page.waitForEvent('console', (message) => /frame-ancestors 'none'/.test(message.text()));
    await page.evaluate((url) => {
      const frame = document.createElement('iframe');
      frame.id = 'framed';
      frame.src = url;
      document.body.append(frame);
    }, `${server.url}/docs`);
    await refused;
    assert.equal(await page.frameLocator('#framed').locator('.swagger-ui').count(), 0);
    const during = consoleErrors.splice(errorsBefore);
    assert.ok(
      during.every((text) => /frame-ancestors 'none'/.test(text)),
      during.join('\n'),
    );
  });

  test('sign out forgets the key; it was never in a URL; the page raised no error (no CSP violation)', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('podplate.apiKey')), null);
    assert.ok(urls.length > 5);
    for (const url of urls) assert.doesNotMatch(url, /pp_/);
    // Outside the hostile readme, the only errors are the browser's notes of refusals the test provoked or the UI
    // expects: the wrong key's 401, the bad port's 400, the conflicting save's 412, and the 403 that tells the UI
    // Bob's template is not Alice's to edit, and the 409 of credentials still in use. So no screen breaks the
    // Content-Security-Policy or throws.
    const unexpected = consoleErrors.filter((text) => !/^Failed to load resource: .*status of (400|401|403|409|412) /.test(text));
    assert.deepEqual(unexpected, []);
  });
});
