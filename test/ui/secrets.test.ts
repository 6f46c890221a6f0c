import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';
import { TOKENS } from '../support/tokens.ts';
import { ensureUiBuilt } from './built.ts';

// Secrets in the web UI, from a user's side (Chromium through playwright-core, a real `podplate serve`): the Secrets
// page (set, replace, delete; values never shown), env values of one's own template masked with a reveal per row,
// tokens masked in history diffs, and the picker in the template form that inserts a reference.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) {
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} does not exist.`);
  test('secrets in the web UI', { skip: `${CHROMIUM} is not installed` });
}

const VALUE = 'browser-secret-sentinel-61c2';
const HF = TOKENS['Hugging Face'] as string;
const AWS = TOKENS['AWS access key id'] as string;

describe('secrets in the web UI', { skip: !hasBrowser }, () => {
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let alice = '';
  let platform = '';
  let templateId = '';
  const errors: string[] = [];

  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const heading = (text: string | RegExp) => page.locator('main h1').first().filter({ hasText: text });
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `secrets-${name}.png`), fullPage: true });
  const mainText = () => page.locator('main').innerText();

  before(async () => {
    ensureUiBuilt();
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'podplate-ui-secrets-'));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'podplate.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' };
    server = await startServer(env);
    platform = server.firstKey() ?? '';
    alice = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    // A private template of Alice's with a literal token (private templates are not scanned), then another in its place.
    templateId = (
      await api(alice, 'POST', '/v1/templates', {
        name: 'sdxl',
        imageName: 'acme/sdxl:1',
        env: { PLAIN: HF, REF: '{{ secret.HF_TOKEN }}' },
      })
    ).id;
    await api(alice, 'PATCH', `/v1/templates/${templateId}`, { env: { PLAIN: AWS, REF: '{{ secret.HF_TOKEN }}' } });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: 120_000,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${server.url}/`);
    await heading('Sign in').waitFor();
    await page.getByLabel('API key').fill(alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Templates').waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the Secrets page sets, replaces and deletes secrets, and never shows a value', async () => {
    await page.getByRole('link', { name: 'Secrets' }).click();
    await heading('Secrets').waitFor();
    await page.getByText('You have no secrets.').waitFor();
    for (const [name, value] of [
      ['HF_TOKEN', `${VALUE}-1`],
      ['WANDB_KEY', `${VALUE}-2`],
      ['HF_TOKEN', VALUE],
    ]) {
      await page.getByLabel('Name', { exact: true }).fill(name as string);
      await page.getByLabel('Value', { exact: true }).fill(value as string);
      await page.getByRole('button', { name: 'Save secret' }).click();
      await page
        .locator('#status')
        .filter({ hasText: `Saved ${name}` })
        .waitFor();
    }
    assert.deepEqual(await page.locator('table.secrets tbody th').allTextContents(), ['HF_TOKEN', 'WANDB_KEY']);
    assert.equal(await page.getByLabel('Value', { exact: true }).inputValue(), '', 'the form is cleared');
    // Replace fills the name in and asks for the value.
    await page.getByRole('button', { name: 'Replace WANDB_KEY' }).click();
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'WANDB_KEY');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'value');
    // A bad name is refused next to its field.
    await page.getByLabel('Name', { exact: true }).fill('bad-name');
    await page.getByLabel('Value', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page
      .locator('.field-error')
      .filter({ hasText: /must be letters, digits and underscores only/ })
      .waitFor();
    await shot('page');
    await page.getByRole('button', { name: 'Delete WANDB_KEY' }).click();
    await page.locator('#status').filter({ hasText: 'Deleted WANDB_KEY' }).waitFor();
    assert.deepEqual(await page.locator('table.secrets tbody th').allTextContents(), ['HF_TOKEN']);
    assert.equal((await page.content()).includes(VALUE), false);
    const listed = await api(alice, 'GET', '/v1/secrets');
    assert.deepEqual(
      listed.map((s: { name: string }) => s.name),
      ['HF_TOKEN'],
    );
  });

  test("one's own template shows env values masked, references as written, each revealed and hidden by its own button", async () => {
    await page.goto(`${server.url}/#/t/${templateId}`);
    await heading('sdxl').waitFor();
    const text = await mainText();
    assert.equal(text.includes(AWS), false);
    assert.match(text, /PLAIN\s+••••••••/);
    assert.match(text, /REF\s+\{\{ secret\.HF_TOKEN \}\}/);
    assert.equal(await page.getByRole('button', { name: 'Reveal REF' }).count(), 0, 'a reference hides nothing');
    const reveal = page.getByRole('button', { name: 'Reveal PLAIN' });
    await reveal.click();
    assert.ok((await mainText()).includes(AWS));
    const hide = page.getByRole('button', { name: 'Hide PLAIN' });
    assert.equal(await hide.getAttribute('aria-pressed'), 'true');
    await shot('revealed');
    await hide.click();
    assert.equal((await mainText()).includes(AWS), false);
  });

  test('history diffs mask env values, each behind a reveal', async () => {
    await page.goto(`${server.url}/#/t/${templateId}/history`);
    await heading(/History of sdxl/).waitFor();
    await page.locator('table.diff').first().waitFor();
    const text = await mainText();
    assert.equal(text.includes(AWS), false);
    assert.equal(text.includes(HF.slice(3)), false);
    assert.match(text, /Variable PLAIN\s+•••••••• Reveal\s+•••••••• Reveal/);
  });

  test('the picker in the template form inserts a reference at the cursor, and the template saves with it', async () => {
    await page.goto(`${server.url}/#/t/${templateId}/edit`);
    await heading(/Edit sdxl/).waitFor();
    const value = page.getByLabel('Value 1', { exact: true });
    await value.fill('Bearer ');
    const picker = page.getByLabel('Insert a secret into value 1');
    assert.deepEqual(await picker.locator('option').allTextContents(), ['Insert secret…', 'HF_TOKEN']);
    await picker.selectOption('HF_TOKEN');
    assert.equal(await value.inputValue(), 'Bearer {{ secret.HF_TOKEN }}');
    await shot('picker');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .locator('#status')
      .filter({ hasText: /Saved sdxl/ })
      .waitFor();
    const saved = await api(alice, 'GET', `/v1/templates/${templateId}`);
    assert.equal(saved.env.PLAIN, 'Bearer {{ secret.HF_TOKEN }}');
    const resolved = await api(platform, 'POST', `/v1/templates/${templateId}/resolve`, { account: 'alice' });
    assert.equal(resolved.template.env.PLAIN, `Bearer ${VALUE}`);
  });

  test('no errors in the console but the refused bad name', () => {
    assert.deepEqual(
      errors.filter((e) => !/status of 400/.test(e)),
      [],
    );
  });
});
