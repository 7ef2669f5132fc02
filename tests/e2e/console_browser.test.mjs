// End-to-end: the console's pages in a real browser (Debian's Chromium, driven by playwright-core)
// against the real binary (auth required, SQLite): signing in through the sign-in link's page, a
// key made on the Keys page, its secret read once and used with the official OpenAI SDK, the key
// revoked on the page and the SDK refused; a viewer offered no create or revoke buttons; the
// Models page; axe-core on every page (no serious or critical violation), no CSP violation, and
// screenshots at 375 and 1440 px wide (under the binary's tree, console-screenshots/). Skipped when
// Chromium is not installed (scripts/setup installs it), and on the sanitizer pass (the `browser`
// tier). Prints how long the Keys page takes to show its keys.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, sdkError, TOLLGATE_BIN,
} from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import { skipTier } from '../fixtures/tiers.mjs';

const CHROMIUM = process.env.TOLLGATE_CHROMIUM
  ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
const skip = skipTier('browser')
  || (CHROMIUM ? false : 'Chromium is not installed (scripts/setup installs Debian\'s chromium)');
const SHOTS = path.join(path.dirname(TOLLGATE_BIN), 'console-screenshots');
const WIDTHS = [375, 1440];
const T = { timeout: 60_000 };

describe('console pages in Chromium', { skip }, () => {
  let mock;
  let gw;
  let browser;
  let axeSource;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
  const chat = (apiKey) =>
    client(apiKey).chat.completions.create({ model: 'mock_model', messages: [{ role: 'user', content: 'hello' }] });

  before(async () => {
    const { chromium } = await import('playwright-core');
    axeSource = createRequire(import.meta.url)('axe-core').source;
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } }));
    config.console = { owner_email: 'owner@pages.test' };
    gw = await startGateway({ config });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await mock?.close();
  });

  /** A new browser context and page; every CSP violation it reports is collected. */
  async function newPage(width = 1440) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.cspViolations = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) page.cspViolations.push(m.text());
    });
    return page;
  }

  /** Signs `page` in through the sign-in link's page, by its button; lands on the console. */
  async function signIn(page, token) {
    await page.goto(`${gw.baseURL}/console/signin?token=${token}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.baseURL}/console/`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }

  /** axe-core on the page as it is: no serious or critical violation. */
  async function assertAccessible(page, what) {
    // Evaluated through the browser's debugging protocol, which the page's CSP does not govern.
    await page.evaluate(axeSource);
    const found = await page.evaluate(async () => (await globalThis.axe.run(document, { resultTypes: ['violations'] })).violations
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })));
    const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], `${what}: axe-core found ${JSON.stringify(bad, null, 1)}`);
  }

  /** Screenshots of the page at both widths, then back to `restore` px. */
  async function screenshots(page, name, restore = 1440) {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: restore, height: 900 });
  }

  test('sign in by the link\'s button, make a key, use it with the SDK, revoke it on the page: the SDK gets 401', T, async () => {
    const page = await newPage();
    await page.goto(`${gw.baseURL}/console/keys`);
    await page.waitForURL(/\/console\/signin$/);  // Not signed in: sent to the sign-in page.
    await assertAccessible(page, 'sign-in page (no link)');
    await page.goto(`${gw.baseURL}/console/signin?token=${linkToken(gw.stdout)}`);
    await assertAccessible(page, 'sign-in page');
    await screenshots(page, 'signin');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.baseURL}/console/`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('Team').inputValue() !== '', true, 'a team is chosen');

    // Make a key: its secret is shown once, with a copy button and a warning.
    await page.getByLabel("New key's name").fill('browser-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.locator('[data-secret]');
    await secretBox.waitFor();
    const secret = (await secretBox.textContent()).trim();
    assert.match(secret, /^sk-tollgate-[0-9A-Za-z]+-[0-9A-Za-z]+$/);
    await page.getByText('It will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await assertAccessible(page, 'keys page with a new secret');
    await screenshots(page, 'keys-secret');
    const row = page.locator('tr', { hasText: 'browser-key' });
    await row.getByText('active').waitFor();

    const c = await chat(secret);
    assert.equal(c.object, 'chat.completion');

    // Dismissing the secret leaves no trace of it on the page.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await page.getByText(secret).count(), 0);

    // Revoke, after a confirmation that names the key.
    await row.getByRole('button', { name: 'Revoke browser-key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “browser-key”?' });
    await dialog.waitFor();
    await assertAccessible(page, 'revoke confirmation');
    await screenshots(page, 'keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke “browser-key”' }).click();
    await row.getByText('revoked').waitFor();
    assert.equal(await row.getByRole('button').count(), 0, 'a revoked key offers no revoke');

    const err = await sdkError(() => chat(secret));
    assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 401);
    assert.equal(err.code, 'revoked_api_key');

    // How long the Keys page takes to show its keys, from navigation to the rows on screen.
    await page.getByLabel("New key's name").fill('kept');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('tr', { hasText: 'kept' }).waitFor();
    const t0 = Date.now();
    await page.goto(`${gw.baseURL}/console/keys`);
    await page.locator('table.keys tbody tr', { hasText: 'kept' }).waitFor();
    const wall = Date.now() - t0;
    const sinceNavigation = await page.evaluate(() => Math.round(performance.now()));
    console.log(`keys page: its keys on screen ${sinceNavigation} ms after navigation started (${wall} ms as the test saw it)`);
    await assertAccessible(page, 'keys page');
    await screenshots(page, 'keys');

    // Keyboard: the skip link comes first, and the page's controls are reachable by Tab.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');

    // The Models page: searchable, with the endpoint kind and prices.
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    await page.locator('table.models tbody tr').first().waitFor();
    const all = await page.locator('table.models tbody tr').count();
    assert.ok(all >= 2, `${all} models listed`);
    await page.getByLabel('Search').fill('mock_model');
    await page.locator('table.models tbody tr', { hasText: 'mock_model' }).first().waitFor();
    assert.ok(await page.locator('table.models tbody tr').count() < all, 'the search narrows the table');
    await page.getByLabel('Search').fill('');
    await assertAccessible(page, 'models page');
    await screenshots(page, 'models');
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });

  test('a viewer is offered no create or revoke buttons', T, async () => {
    const token = linkToken((await ok('login-link', 'viewer@pages.test')).stdout);
    await ok('members', 'add', 'default', 'viewer@pages.test', '--role', 'viewer');
    const page = await newPage(375);
    await signIn(page, token);
    await page.locator('table.keys tbody tr', { hasText: 'kept' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    assert.equal(await page.getByLabel("New key's name").count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Revoke/ }).count(), 0);
    assert.match(await page.locator('main').textContent(), /You are a viewer here/);
    await assertAccessible(page, 'keys page (viewer)');
    await screenshots(page, 'keys-viewer', 375);
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });
});
