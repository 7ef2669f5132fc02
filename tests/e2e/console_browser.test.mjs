// End-to-end: the console's pages in a real browser (Debian's Chromium, driven by playwright-core)
// against the real binary (auth required, SQLite): signing in through the sign-in link's page, a
// key made on the Keys page, its secret read once and used with the official OpenAI SDK, the key
// revoked on the page and the SDK refused; a viewer offered no create or revoke buttons; a key's
// own rules shown and changed by the owner in the rules dialog, the SDK then refused the model
// taken away, and an expired key listed as inactive; the
// Models page and a model's own page with its ready-to-paste request and copy button; a user
// invited on the Team page who opens the link signed out, signs in and joins with the
// invitation's role; a user with no team who makes one; a playground run streamed before the
// mock has finished, its cost then in Usage (tables, chart, balance); the Audit log; axe-core on
// every page (no serious or critical violation), no CSP violation, a name stored with a bidi
// override shown escaped (\u202E), and screenshots at 375 and
// 1440 px wide (under the binary's tree, console-screenshots/). Skipped when Chromium is not
// installed (scripts/setup installs it), and on the sanitizer pass (the `browser` tier). Prints
// how long the Keys page takes to show its keys. Signing in with the identity provider:
// console_browser_oidc.test.mjs.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import OpenAI from 'openai';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, sdkError, waitFor,
} from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import {
  BROWSER_SKIP, CHROMIUM, SHOTS, assertAccessible, newPage as contextPage, screenshots, signInByLink,
} from '../fixtures/browser.mjs';

const T = { timeout: 60_000 };

describe('console pages in Chromium', { skip: BROWSER_SKIP }, () => {
  let mock;
  let gw;
  let browser;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
  const chat = (apiKey) =>
    client(apiKey).chat.completions.create({ model: 'mock_model', messages: [{ role: 'user', content: 'hello' }] });

  before(async () => {
    const { chromium } = await import('playwright-core');
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const standard = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
    const config = unpriced(standard);
    // The one priced model: the playground's run costs something, which Usage then shows.
    config.models.priced_model = { ...standard.models.mock_model, display_name: 'Priced' };
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
  const newPage = (width = 1440) => contextPage(browser, width);

  /** Signs `page` in through the sign-in link's page, by its button; lands on the console. */
  async function signIn(page, token) {
    await signInByLink(page, gw.baseURL, token);
    await page.waitForURL(`${gw.baseURL}/console/`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }



  test('sign in by the link\'s button, make a key, use it with the SDK, revoke it on the page: the SDK gets 401', T, async () => {
    const page = await newPage();
    await page.goto(`${gw.baseURL}/console/keys`);
    // Not signed in: sent to the sign-in page, which keeps the page to return to.
    await page.waitForURL(/\/console\/signin\?return_to=%2Fconsole%2Fkeys$/);
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

    // A model's own page, from its link in the table: details and a ready-to-paste request.
    await page.locator('table.models tbody tr').getByRole('link', { name: 'priced_model', exact: true }).click();
    await page.waitForURL(`${gw.baseURL}/console/models/priced_model`);
    await page.getByRole('heading', { name: 'Model priced_model', level: 1 }).waitFor();
    const details = page.locator('[data-model-details]');
    await details.getByText('chat', { exact: true }).waitFor();
    assert.match(await details.textContent(), /Input \/ 1M tokens\$\d/);
    const snippet = page.locator('[data-snippet]');
    const curl = await snippet.textContent();
    assert.match(curl, new RegExp(`^curl ${gw.baseURL}/v1/chat/completions`));
    assert.match(curl, /Bearer \$TOLLGATE_API_KEY/);
    assert.match(curl, /"model": "priced_model"/);
    assert.doesNotMatch(curl, /sk-tollgate-/, 'never a real key');
    await page.getByRole('button', { name: 'Python' }).click();
    assert.match(await snippet.textContent(), new RegExp(`base_url="${gw.baseURL}/v1", api_key=os\\.environ\\["TOLLGATE_API_KEY"\\]`));
    await page.getByRole('button', { name: 'Node' }).click();
    const node = await snippet.textContent();
    assert.match(node, new RegExp(`baseURL: '${gw.baseURL}/v1', apiKey: process\\.env\\.TOLLGATE_API_KEY`));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.baseURL });
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), node);
    await assertAccessible(page, 'model page');
    await screenshots(page, 'model');
    await page.getByRole('link', { name: '← All models' }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
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
    // The navigation offers what a viewer's actions allow: usage and the team, no playground or audit log.
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Usage' }).waitFor();
    await nav.getByRole('link', { name: 'Team' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Playground' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Audit log' }).count(), 0);
    await assertAccessible(page, 'keys page (viewer)');
    await screenshots(page, 'keys-viewer', 375);
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });
  /** A new page signed in as `email` (a fresh sign-in link), on the console's first page. */
  async function signedIn(email, width = 1440) {
    const page = await newPage(width);
    await signIn(page, linkToken((await ok('login-link', email)).stdout));
    return page;
  }

  test('a key\'s own rules: shown in its row, changed by the owner in the rules dialog; an expired key is inactive', T, async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const narrow = (await ok('keys', 'create', '--team', 'default', '--name', 'contractor',
      '--expires-at', expires, '--allowed-models', 'mock_model')).stdout.trim();
    await ok('keys', 'create', '--team', 'default', '--name', 'short-lived',
      '--expires-at', new Date(Date.now() + 1500).toISOString());
    const page = await signedIn('owner@pages.test');
    const row = page.locator('table.keys tbody tr', { hasText: 'contractor' });
    await row.locator('[data-allowed-models]', { hasText: 'mock_model' }).waitFor();
    await row.locator('[data-expires-at]').waitFor();
    await row.getByRole('button', { name: 'Rules of contractor' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rules of “contractor”' });
    await dialog.waitFor();
    await assertAccessible(page, 'key rules dialog');
    await dialog.getByLabel(/Only these models/).fill('echo');
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await row.locator('[data-allowed-models]', { hasText: 'echo' }).waitFor();
    const err = await sdkError(() => chat(narrow));
    assert.ok(err instanceof OpenAI.PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'model_not_allowed');

    // Past its expiry (by the clock, not a change the gateways are told of), the list says so.
    const expired = page.locator('table.keys tbody tr', { hasText: 'short-lived' });
    await waitFor(async () => {
      await page.reload();
      await expired.waitFor();
      return (await expired.getByText('inactive').count()) > 0;
    }, 10_000, 250);
    assert.match(await expired.locator('[data-inactive-reason]').textContent(), /it has expired/);
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });

  test('invite a user on the Team page: they open the link, sign in, accept and join with the role; a user with no team makes one', T, async () => {
    const invitee = 'invitee@pages.test';
    const inviteeToken = linkToken((await ok('login-link', invitee)).stdout);  // Adds the user.
    const owner = await signedIn('owner@pages.test');
    await owner.getByRole('link', { name: 'Team', exact: true }).click();
    await owner.getByRole('heading', { name: 'Team default', level: 1 }).waitFor();
    await owner.locator('table.members tbody tr', { hasText: 'owner@pages.test' }).waitFor();
    await owner.getByLabel('Role', { exact: true }).selectOption('member');
    await owner.getByLabel(/^Email/).fill(invitee);
    await owner.getByRole('button', { name: 'Create invitation' }).click();
    const linkBox = owner.locator('[data-invite-link]');
    await linkBox.waitFor();
    const link = (await linkBox.textContent()).trim();
    assert.match(link, /\/console\/invite\?token=inv-tollgate-/);
    await owner.getByRole('button', { name: 'Copy link' }).waitFor();
    await owner.locator('table.invitations tbody tr', { hasText: invitee }).getByText('pending').waitFor();
    await assertAccessible(owner, 'team page with a new invitation link');
    await screenshots(owner, 'team-invite');

    // The invitee opens the link before signing in: sent to sign in, then back to the invitation.
    const guest = await newPage(375);
    await guest.goto(link);
    await guest.waitForURL(/\/console\/signin\?return_to=%2Fconsole%2Finvite$/);
    // Told to sign in first: the invitation itself signs no one in.
    await guest.getByText('An invitation does not sign you in').waitFor();
    await guest.goto(`${gw.baseURL}/console/signin?token=${inviteeToken}`);
    await guest.getByRole('button', { name: 'Sign in' }).click();
    await guest.getByRole('heading', { name: 'Join team default', level: 1 }).waitFor();
    // The team, the role and who invited, at 375 and at 1440 px.
    for (const width of [375, 1440]) {
      await guest.setViewportSize({ width, height: 900 });
      assert.equal((await guest.locator('[data-invitation-summary]').textContent()).trim(),
        'owner@pages.test invited you to team default as a member.');
      assert.ok(await guest.locator('[data-invitation-summary]').isVisible());
    }
    await guest.setViewportSize({ width: 375, height: 900 });
    assert.equal(new URL(guest.url()).pathname, '/console/invite');
    await assertAccessible(guest, 'invitation page');
    await screenshots(guest, 'invite', 375);
    await guest.getByRole('button', { name: 'Accept the invitation' }).click();
    await guest.getByRole('heading', { name: 'Team default', level: 1 }).waitFor();
    assert.match(await guest.locator('header select option:checked').textContent(), /default \(member\)/);
    assert.equal(await guest.getByRole('button', { name: 'Create invitation' }).count(), 0, 'a member may not invite');
    assert.equal(await guest.getByRole('button', { name: /^Remove/ }).count(), 0, 'a member may not remove');
    await assertAccessible(guest, 'team page (member)');
    await screenshots(guest, 'team-member', 375);

    // The owner sees them joined and the invitation accepted; makes them a viewer.
    await owner.reload();
    const row = owner.locator('table.members tbody tr', { hasText: invitee });
    await row.waitFor();
    await owner.locator('table.invitations tbody tr', { hasText: invitee }).getByText('accepted').waitFor();
    assert.equal(await row.getByRole('combobox').inputValue(), 'member');
    await row.getByRole('combobox').selectOption('viewer');
    await row.getByRole('button', { name: `Save the role of ${invitee}` }).click();
    await Promise.all([
      owner.waitForResponse((r) => r.request().method() === 'PATCH' && r.ok()),
      owner.getByRole('dialog', { name: `Make ${invitee} a viewer?` }).getByRole('button', { name: 'Make a viewer' }).click(),
    ]);
    await owner.reload();
    await owner.locator('table.members tbody tr', { hasText: invitee }).waitFor();
    assert.equal(await owner.locator('table.members tbody tr', { hasText: invitee }).getByRole('combobox').inputValue(), 'viewer');
    const members = JSON.parse((await ok('members', 'list', 'default', '--json')).stdout);
    assert.equal(members.find((m) => m.email === invitee)?.role, 'viewer');
    // A second invitation, revoked; then the invitee removed after a confirmation naming them.
    await owner.getByLabel('Role', { exact: true }).selectOption('viewer');
    await owner.getByLabel(/^Email/).fill('');
    await owner.getByRole('button', { name: 'Create invitation' }).click();
    const open = owner.locator('table.invitations tbody tr', { hasText: 'anyone with the link' });
    await open.getByText('pending').waitFor();
    await open.getByRole('button', { name: /^Revoke/ }).click();
    await open.getByText('revoked').waitFor();
    await owner.getByRole('button', { name: 'Done' }).click();
    await assertAccessible(owner, 'team page (owner)');
    await screenshots(owner, 'team');
    await owner.locator('table.members tbody tr', { hasText: invitee }).getByRole('button', { name: `Remove ${invitee}` }).click();
    const dialog = owner.getByRole('dialog', { name: `Remove ${invitee}?` });
    await dialog.getByRole('button', { name: `Remove ${invitee}` }).click();
    await owner.locator('table.members tbody tr', { hasText: invitee }).waitFor({ state: 'detached' });
    assert.equal(JSON.parse((await ok('members', 'list', 'default', '--json')).stdout).some((m) => m.email === invitee), false);

    // Someone with no team is told so, and makes one.
    const loner = await newPage(375);
    await loner.goto(`${gw.baseURL}/console/signin?token=${linkToken((await ok('login-link', 'loner@pages.test')).stdout)}`);
    await loner.getByRole('button', { name: 'Sign in' }).click();
    await loner.getByRole('heading', { name: 'No team yet', level: 1 }).waitFor();
    await loner.getByText('You are not a member of any team yet').waitFor();
    await assertAccessible(loner, 'no team yet');
    await screenshots(loner, 'no-team', 375);
    await loner.getByLabel("New team's name").fill('lonely');
    await loner.getByRole('button', { name: 'Create team' }).click();
    await loner.getByRole('heading', { name: 'Team lonely', level: 1 }).waitFor();
    assert.match(await loner.locator('header select option:checked').textContent(), /lonely \(owner\)/);
    await loner.getByText('Create another team').click();
    await loner.getByLabel("New team's name").fill('lonely-too');
    await loner.getByRole('button', { name: 'Create team' }).click();
    await loner.getByRole('heading', { name: 'Team lonely-too', level: 1 }).waitFor();
    assert.equal(await loner.locator('header select option').count(), 2, 'the switcher offers both teams');
    for (const p of [owner, guest, loner]) {
      assert.deepEqual(p.cspViolations, [], 'no CSP violation');
      await p.context().close();
    }
  });

  test('a playground run streams its text before the upstream has finished; its cost then shows in Usage; the audit log', T, async () => {
    await ok('teams', 'topup', 'default', '5');
    const page = await signedIn('owner@pages.test');
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
    await page.getByLabel('Model', { exact: true }).selectOption('priced_model');
    await page.getByLabel('System prompt').fill('Be brief.');
    // The mock sends 20 pieces, one every 60 ms.
    await page.getByLabel('Your message').fill('Count for me. mock:stream-slow=60');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const output = page.locator('[data-output]');
    await output.getByText('tok0', { exact: false }).waitFor();
    const early = await output.textContent();
    assert.ok(!early.includes('tok19'), `the first piece shows before the last is sent: ${early}`);
    assert.equal(await page.getByRole('button', { name: 'Stop' }).isEnabled(), true, 'Stop is offered while it runs');
    const cost = page.locator('[data-cost]');
    await cost.waitFor();
    assert.match(await output.textContent(), /tok0 .*tok19/);
    const costText = (await cost.textContent()).trim();
    assert.match(costText, /^\$0\.0\d+$/);
    assert.match(await page.locator('[data-stats]').textContent(), /\d+ in, \d+ out/);
    await page.getByRole('button', { name: 'View code' }).click();
    const code = page.locator('pre.code');
    assert.match(await code.textContent(), new RegExp(`curl ${gw.baseURL}/v1/chat/completions`));
    await page.getByRole('button', { name: 'Python' }).click();
    assert.match(await code.textContent(), /base_url="http:\/\/127\.0\.0\.1:\d+\/v1"/);
    await assertAccessible(page, 'playground after a run');
    await screenshots(page, 'playground');

    // Usage: the run's cost in the day's total, the model's, and the rows (tagged playground).
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    // Usage shows money to the cent ("< $0.01" for this run), the exact figure on hover.
    const exactCost = async (row) => Number((await row.locator('[data-cost] span').getAttribute('title')).replace(/[$,]/g, ''));
    const byModel = page.locator('table.by-model tbody tr', { hasText: 'priced_model' });
    await byModel.waitFor();
    assert.equal((await byModel.locator('[data-cost]').textContent()).trim(), '< $0.01');
    assert.ok(Math.abs(await exactCost(byModel) - Number(costText.slice(1))) < 1e-6, `the run's ${costText}`);
    const byDay = page.locator('table.by-day tbody tr').first();
    await byDay.waitFor();
    assert.ok(Math.abs(await exactCost(byDay) - Number(costText.slice(1))) < 1e-6, `the day's total is the run's ${costText}`);
    const spent = page.locator('table.rows tbody tr', { hasText: 'priced_model' });
    await spent.getByText('playground=true').waitFor();
    assert.equal(await page.locator('.chart rect.bar[height]:not([height="0"])').count(), 1, 'one day has a bar');
    assert.match(await page.locator('[data-balance] span').getAttribute('title'), /^\$4\.99/);
    assert.match(await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'), /\/spend\.csv\?since=/);
    // How long the Usage page takes to show its data (its five calls), from navigation.
    const t0 = Date.now();
    await page.goto(`${gw.baseURL}/console/usage`);
    await page.locator('table.rows tbody tr', { hasText: 'priced_model' }).waitFor();
    await page.locator('table.by-model tbody tr', { hasText: 'priced_model' }).waitFor();
    const sinceNavigation = await page.evaluate(() => Math.round(performance.now()));
    console.log(`usage page: its data on screen ${sinceNavigation} ms after navigation started (${Date.now() - t0} ms as the test saw it)`);
    await assertAccessible(page, 'usage page');
    await screenshots(page, 'usage');
    await page.emulateMedia({ colorScheme: 'dark' });
    await assertAccessible(page, 'usage page, dark');
    await screenshots(page, 'usage-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // The audit log, which owners read.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.locator('table.audit tbody tr', { hasText: 'invitation.accepted' }).first().waitFor();
    await assertAccessible(page, 'audit log');
    await screenshots(page, 'audit');

    // Stop: a slower run, stopped after its first piece (after Usage was checked: it is billed too).
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Your message').fill('Slowly. mock:stream-slow=400');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await output.getByText('tok0', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Stopped.').waitFor();
    assert.ok(!(await output.textContent()).includes('tok19'), 'the stopped run shows no more pieces');
    assert.deepEqual(page.cspViolations, [], 'no CSP violation');
    await page.context().close();
  });

  test('a name stored with a format character (from before names were checked) is shown escaped', T, async () => {
    await ok('teams', 'create', 'escapes');
    const token = linkToken((await ok('login-link', 'escapes@pages.test')).stdout);
    await ok('members', 'add', 'escapes', 'escapes@pages.test', '--role', 'owner');
    execFileSync('sqlite3', [`${gw.dataHome}/tollgate/tollgate.db`,
      "INSERT INTO api_keys (id, public_id, secret_hash, name, team_id, created_at) SELECT 'legacy', "
      + "'legacy000001', 'h', 'evil' || char(8238) || 'txt', id, 0 FROM teams WHERE name = 'escapes'"]);
    const page = await newPage();
    await signIn(page, token);
    const row = page.locator('table.keys tbody tr', { hasText: 'legacy000001' });
    await row.waitFor();
    const text = await row.textContent();
    assert.ok(text.includes('evil\\u202Etxt') && !text.includes('\u202E'), text);
    await page.context().close();
  });
});
