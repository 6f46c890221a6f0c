import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';
import { ensureUiBuilt } from './built.ts';

// What the browser test files share: a real `podplate serve` on a SQLite file, keys for a few users and the platform,
// Debian's Chromium driven by playwright-core, and the screenshots. Without /usr/bin/chromium a file is skipped,
// loudly, unless REQUIRE_BROWSER=1 (as in CI), where that is a failure.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/** Whether the browser is there; when it is not, says so (and fails with REQUIRE_BROWSER=1). */
export function browserPresent(name: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} does not exist: install it (apt-get install -y chromium).`);
  process.stderr.write(`\n*** ${CHROMIUM} is missing: ${name} is SKIPPED (apt-get install -y chromium). ***\n\n`);
  test(name, { skip: `${CHROMIUM} is not installed` });
  return false;
}

export interface Session {
  server: ServerProcess;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  keys: Record<string, string>;
  /** Errors the page logged or threw. */
  consoleErrors: string[];
  /** A call to the API as `key`, which must succeed; the parsed answer. */
  api: <T = { id: string } & Record<string, unknown>>(key: string, method: string, path: string, body?: unknown) => Promise<T>;
  /** Saves the page under test-results/; with `docs`, also under docs/ when UPDATE_SCREENSHOTS=1. */
  shot: (name: string, docs?: string) => Promise<void>;
  /** The screen's own heading (a readme may have headings of its own, after it), the whole of it when a string. */
  heading: (text: string | RegExp) => ReturnType<Page['locator']>;
  /** Signs in with `key` and waits for the template list. */
  signIn: (key: string) => Promise<void>;
  close: () => Promise<void>;
}

/** A session over a new server; `settings` are added to its environment (image checks are off unless turned on). */
export async function openSession(users: string[], settings: Record<string, string> = {}): Promise<Session> {
  ensureUiBuilt();
  mkdirSync(SHOTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'podplate-ui-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'podplate.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', ...settings };
  const server = await startServer(env);
  const keys: Record<string, string> = { platform: server.firstKey() ?? '' };
  assert.ok(keys.platform, 'the bootstrap platform key is printed');
  for (const user of users) {
    const made = podplate(['keys', 'create', '--user', user], env);
    assert.equal(made.code, 0, made.stderr);
    keys[user] = made.stdout.trim();
  }
  const browser = await chromium.launch({
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
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  context.setDefaultTimeout(20_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));

  const api = async <T>(key: string, method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  };
  // A string names the whole heading: "my comfy" is not "Edit my comfy", the screen before it.
  const heading = (text: string | RegExp) =>
    page
      .locator('main h1')
      .first()
      .filter({ hasText: typeof text === 'string' ? new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : text });
  return {
    server,
    browser,
    context,
    page,
    keys,
    consoleErrors,
    api,
    heading,
    shot: async (name, docs) => {
      const path = join(SHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      if (docs && process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(path, join(DOCS, docs));
    },
    signIn: async (key) => {
      await page.goto(`${server.url}/`);
      await page.evaluate(() => sessionStorage.clear());
      await page.goto(`${server.url}/#/`);
      await heading('Sign in to Podplate').waitFor();
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await heading('Templates').waitFor();
    },
    close: async () => {
      await browser.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
