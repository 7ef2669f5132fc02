// End-to-end: a key's rate limits and budget on the console's Keys page in Chromium (the `browser`
// tier; console_browser.test.mjs covers the rest of the page): made in the create form with its
// requests, tokens and requests at once a minute and a budget, listed in its row with the budget's
// spend once the key has spent, a limit lowered in the rules dialog and the row changed; a limit
// above the operator's ([limits.key]) shows the server's own message to the user.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, waitFor,
} from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import { BROWSER_SKIP, CHROMIUM, newPage, signInByLink } from '../fixtures/browser.mjs';

const T = { timeout: 30_000 };

describe('a key\'s limits and budget on the Keys page in Chromium', { skip: BROWSER_SKIP }, () => {
  let mock;
  let gw;
  let browser;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));

  before(async () => {
    const { chromium } = await import('playwright-core');
    mock = await startMock();
    const config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { auth: 'required' } });
    config.limits = { key: { rpm: 60, tpm: 100_000, concurrent: 8 } };
    config.console = { owner_email: 'owner@limits.test' };
    gw = await startGateway({ config });
    await ok('teams', 'topup', 'default', '5');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await mock?.close();
  });

  test('limits and a budget made in the form, shown with the spend, one lowered; one above the operator\'s refused in words', T, async () => {
    const page = await newPage(browser);
    await signInByLink(page, gw.baseURL, linkToken((await ok('login-link', 'owner@limits.test')).stdout));
    await page.waitForURL(`${gw.baseURL}/console/`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    const form = page.locator('form.create');
    await form.getByLabel("New key's name").fill('limited');
    await form.getByText('Rules (optional)').click();
    await form.getByLabel(/^Requests a minute/).fill('30');
    await form.getByLabel(/^Tokens a minute/).fill('50000');
    await form.getByLabel(/^Requests at once/).fill('4');
    await form.getByLabel('Budget in USD (empty: none)').fill('2.50');
    await form.getByLabel('Budget per').selectOption('day');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('[data-secret]').textContent()).trim();
    assert.match(secret, /^sk-tollgate-/);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    const row = page.locator('table.keys tbody tr', { hasText: 'limited' });
    const limits = row.locator('[data-limits]');
    await limits.waitFor();
    assert.equal(await limits.textContent(),
      '30 requests/min · 50000 tokens/min · 4 at once · budget 2.5 USD per day (0 spent this day)');

    // The key spends; the list shows what it spent of its budget today.
    const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hello'), { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-ratelimit-limit-requests'), '30');
    const spent = await waitFor(async () => {
      await page.reload();
      await limits.waitFor();
      const m = /budget 2\.5 USD per day \((\S+) spent this day\)$/.exec(await limits.textContent());
      return m && Number(m[1]) > 0 ? m[1] : null;
    }, 10_000, 250);
    assert.ok(Number(spent) < 0.01, `spent ${spent}`);

    // A limit lowered in the rules dialog: the row shows it, and the next request is held to it.
    await row.getByRole('button', { name: 'Rules of limited' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rules of “limited”' });
    await dialog.getByLabel(/^Requests a minute/).fill('3');
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await row.locator('[data-limits]', { hasText: /^3 requests\/min · 50000 tokens\/min · 4 at once · budget 2\.5 USD per day/ }).waitFor();
    const next = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('again'), { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(next.headers.get('x-ratelimit-limit-requests'), '3');

    // Above the operator's limit: the form shows the server's message, and makes no key.
    await form.getByLabel("New key's name").fill('greedy');
    await form.getByText('Rules (optional)').click(); // Closed again by the page's reload.
    await form.getByLabel(/^Requests a minute/).fill('61');
    await form.getByRole('button', { name: 'Create key' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    assert.equal((await alert.textContent()).trim(),
      'rpm must be from 1 to 60, the limit the operator set (only the operator raises one)');
    assert.equal(await page.locator('table.keys tbody tr', { hasText: 'greedy' }).count(), 0);
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });
});
