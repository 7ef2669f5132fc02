// End-to-end: signing in to the console in a real browser (Debian's Chromium, driven by
// playwright-core) against the real binary configured with [console.oidc] and a real OpenID
// provider (oidc-provider, as tests/fixtures/oidc.mjs runs it; its development login form, no
// consent screen). The gateway's public URL is its own http base URL on loopback. Also: a sign-in
// link used twice, whose second use comes back to the sign-in page with a message, not a JSON
// error. axe-core on those pages (no serious or critical violation), no CSP violation on the
// gateway's pages, and screenshots at 375 and 1440 px wide (under the binary's tree,
// console-screenshots/). Skipped when Chromium is not installed, and on the sanitizer pass (the
// `browser` tier).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, adminOf } from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import { CLIENT_ID, CLIENT_SECRET, startProvider } from '../fixtures/oidc.mjs';
import { BROWSER_SKIP, CHROMIUM, SHOTS, assertAccessible, screenshots } from '../fixtures/browser.mjs';

const T = { timeout: 60_000 };
const SECRET_ENV = 'TOLLGATE_TEST_OIDC_SECRET';

describe('console sign-in in Chromium: the identity provider, and a used sign-in link', { skip: BROWSER_SKIP }, () => {
  let mock;
  let provider;
  let gw;
  let browser;
  let base;
  const { ok } = adminOf(() => ({
    configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome, [SECRET_ENV]: CLIENT_SECRET },
  }));

  before(async () => {
    const { chromium } = await import('playwright-core');
    mock = await startMock();
    // The gateway's port is chosen first: its public URL, and so the provider's redirect URI, name it.
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    provider = await startProvider({
      redirectUri: `${base}/console/api/auth/oidc/callback`,
      accounts: { ann: { email: 'ann@acme.example.com', email_verified: true } },
    });
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, { gateway: { auth: 'required', listen: `127.0.0.1:${port}` } });
    config.console = {
      public_url: base,
      owner_email: 'ann@acme.example.com',
      login_links: true,
      oidc: { issuer: provider.issuer, client_id: CLIENT_ID, client_secret: `env::${SECRET_ENV}` },
    };
    gw = await startGateway({ config, env: { [SECRET_ENV]: CLIENT_SECRET } });
    assert.equal(gw.baseURL, base);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await provider?.close();
    await mock?.close();
  });

  /** A new browser context and page; CSP violations on the gateway's pages are collected. */
  async function newPage(width = 1440) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.cspViolations = [];
    page.on('console', (m) => {
      // The provider's development pages are not the gateway's; only the gateway's count.
      if (/Content Security Policy/i.test(m.text()) && page.url().startsWith(base)) page.cspViolations.push(m.text());
    });
    return page;
  }



  test('sign in with the identity provider: its login form, then signed in on the console', T, async () => {
    const page = await newPage();
    await page.goto(`${base}/console/keys`);
    // Not signed in: sent to the sign-in page, which keeps the page to return to.
    await page.waitForURL(/\/console\/signin\?return_to=%2Fconsole%2Fkeys$/);
    await assertAccessible(page, 'sign-in page (identity provider)');
    await screenshots(page, 'signin-oidc');
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    // oidc-provider's development login form: any password.
    await page.waitForURL((u) => u.href.startsWith(`${provider.issuer}/interaction/`));
    await page.locator('input[name="login"]').fill('ann');
    await page.locator('input[name="password"]').fill('any password');
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(`${base}/console/keys`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByText('ann@acme.example.com').waitFor();
    assert.match(await page.locator('header select option:checked').textContent(), /default \(owner\)/);
    const audit = JSON.parse((await ok('audit', 'list', '--json')).stdout);
    assert.ok(audit.some((e) => e.action === 'signin' && e.target === 'oidc'), 'the sign-in is audited as oidc');
    // Signed out again: back on the sign-in page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/signin$/);
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });

  for (const width of [1440, 375]) {
    test(`at ${width} px: a session that ended offers the provider's sign-in, which returns to the page it was on`, T, async () => {
      const page = await newPage(width);
      await page.goto(`${base}/console/signin?token=${linkToken((await ok('login-link', 'ann@acme.example.com')).stdout)}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      // The page's own calls done first: one still in flight would meet the ended session itself.
      await page.waitForLoadState('networkidle');
      await ok('users', 'sessions-end', 'ann@acme.example.com');
      await page.getByRole('link', { name: 'Team', exact: true }).click();
      await page.waitForURL(`${base}/console/signin?ended=1&return_to=%2Fconsole%2Fteam`);
      await page.getByRole('heading', { name: 'Your session ended', level: 1 }).waitFor();
      const offered = page.getByRole('link', { name: 'Sign in with your identity provider' });
      assert.equal(await offered.getAttribute('href'), '/console/api/auth/oidc/start?return_to=%2Fconsole%2Fteam');
      await assertAccessible(page, `session ended (identity provider) at ${width} px`);
      await screenshots(page, 'session-ended-oidc', width);
      await offered.click();
      // The provider's login form, unless it still remembers ann from an earlier test's sign-in.
      await page.waitForURL((u) => u.href.startsWith(`${provider.issuer}/interaction/`) || u.href === `${base}/console/team`);
      if (page.url().startsWith(provider.issuer)) {
        await page.locator('input[name="login"]').fill('ann');
        await page.locator('input[name="password"]').fill('any password');
        await page.locator('button[type="submit"]').click();
      }
      await page.waitForURL(`${base}/console/team`);
      await page.getByRole('heading', { name: 'Team default', level: 1 }).waitFor();
      assert.deepEqual(page.cspViolations, [], 'no CSP violation');
      await page.context().close();
    });
  }

  test('a sign-in link used twice: the second time the sign-in page says it has expired or been used', T, async () => {
    const token = linkToken((await ok('login-link', 'ann@acme.example.com')).stdout);
    const first = await newPage();
    await first.goto(`${base}/console/signin?token=${token}`);
    await first.getByRole('button', { name: 'Sign in' }).click();
    await first.waitForURL(`${base}/console/`);
    await first.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await first.context().close();

    const page = await newPage(375);
    await page.goto(`${base}/console/signin?token=${token}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/console/signin?error=invalid_link`);
    await page.getByText('This sign-in link has expired or has already been used').waitFor();
    assert.doesNotMatch(await page.locator('body').textContent(), /sign_in_failed|"error"/, 'no raw JSON error');
    // The identity provider is still offered.
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).waitFor();
    await assertAccessible(page, 'sign-in page with an error');
    await screenshots(page, 'signin-error', 375);
    // The provider's own texts read on the same page.
    await page.goto(`${base}/console/signin?error=email_domain_not_allowed`);
    await page.getByText('Your email address is not in a domain this console accepts.').waitFor();
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });
});
