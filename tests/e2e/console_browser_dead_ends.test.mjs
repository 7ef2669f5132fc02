// End-to-end: the console's ways out of a dead end, in Chromium (playwright-core) against the real
// binary (auth required, no identity provider: console_browser_oidc.test.mjs has that case). At
// 1440 and 375 px wide: a playground run stopped part-way keeps the earlier answer and its own
// partial one in the conversation, and its cost line shows what its spend row (found by the run's
// x-request-id) billed; a run refused for want of balance says so in words ("Team research has
// $0.00; an owner or the operator can top it up"); a panel whose load failed on the network
// offers Retry, which loads it; a session that ended lands on "Your session ended", which says to
// sign in with a link from the operator and, signed in again, returns to the page it was on; an
// invitation meant for someone else says it cannot be used, naming nothing of it. axe-core on
// each page, no CSP violation. Screenshots beside the binary (console-screenshots/).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import {
  BROWSER_SKIP, assertAccessible, consoleRig, closeClean, newPage, screenshots, signInByLink,
} from '../fixtures/browser.mjs';

const T = { timeout: 90_000 };
const OWNER = 'owner@ends.test';

describe('ways out of the console\'s dead ends in Chromium', { skip: BROWSER_SKIP }, () => {
  const rig = consoleRig(OWNER);
  const { ok, spend } = rig;

  before(async () => {
    await rig.start();
    await ok('teams', 'topup', 'default', '5');
    // A team with nothing to spend, of which the owner is an owner too.
    await ok('teams', 'create', 'research');
    await ok('members', 'add', 'research', OWNER, '--role', 'owner');
  });
  after(() => rig.stop());

  /** Signs `page` in as `email` with a fresh sign-in link; lands on the console. */
  async function signIn(page, email = OWNER) {
    await signInByLink(page, rig.gw.baseURL, linkToken((await ok('login-link', email)).stdout));
    await page.waitForURL((u) => u.pathname.startsWith('/console/') && u.pathname !== '/console/signin');
  }

  for (const width of [1440, 375]) {
    test(`at ${width} px: Stop keeps the answers and shows the billed cost; a zero balance in words`, T, async () => {
      const page = await newPage(rig.browser, width);
      await signIn(page);
      await page.getByRole('link', { name: 'Playground' }).click();
      await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
      await page.getByLabel('Model', { exact: true }).selectOption('mock_model');
      // A first run that finishes: its answer is the last one, tok0 … tok19.
      await page.getByLabel('Your message').fill('First. mock:stream-slow=5');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('[data-output]', { hasText: 'tok19' }).waitFor();
      await page.locator('[data-cost]').waitFor();

      // A second, stopped after its first piece.
      await page.getByLabel('Your next message').fill('Second, slowly. mock:stream-slow=400');
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/chat/completions') && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Run', exact: true }).click(),
      ]);
      const requestId = response.headers()['x-request-id'];
      assert.ok(requestId, 'the run has a request id');
      const output = page.locator('[data-output]');
      await output.getByText('tok0', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText('Stopped.').waitFor();
      const partial = (await output.textContent()).trim();
      assert.ok(partial.startsWith('tok0') && !partial.includes('tok19'), `partial: ${partial}`);
      // The conversation keeps the first run's answer and the stopped one's question; the partial
      // answer stays under Output, and is the conversation's last answer.
      const conversation = page.getByRole('list', { name: 'Conversation' });
      await conversation.getByText('tok19', { exact: false }).waitFor();
      await conversation.getByText('Second, slowly.', { exact: false }).waitFor();
      assert.equal(await page.getByLabel('Your next message').inputValue(), '', 'the stopped question is in the conversation');

      // The cost line: what the run's spend row billed.
      const row = await waitFor(async () => (await spend('default')).find((r) => r.request_id === requestId), 8000);
      const cost = page.locator('[data-cost]');
      await cost.filter({ hasText: /^\$\d/ }).waitFor();
      assert.ok(Math.abs(Number((await cost.textContent()).replace(/[$,]/g, '')) - row.cost) < 1e-6,
        `${await cost.textContent()} is the billed ${row.cost}`);
      // The next run's request carries the partial answer as the assistant's.
      await page.getByRole('button', { name: 'View code' }).click();
      await page.getByLabel('Your next message').fill('Third');
      const code = await page.locator('pre.code').textContent();
      assert.ok(code.includes(partial.slice(0, 20)), 'the stopped answer is part of the conversation sent next');
      await assertAccessible(page, `playground after Stop at ${width} px`);
      await screenshots(page, 'playground-stopped', width);

      // Team research has nothing: the refusal says so, with who can help.
      await page.locator('header select').selectOption({ label: 'research (owner)' });
      await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
      await page.getByLabel('Model', { exact: true }).selectOption('mock_model');
      await page.getByLabel('Your message').fill('Anything?');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'Team research has' });
      await refusal.waitFor();
      assert.equal((await refusal.textContent()).trim(), 'Team research has $0.00; an owner or the operator can top it up.');
      assert.doesNotMatch(await page.locator('main').textContent(), /tollgate admin/, 'no command the user cannot run');
      await assertAccessible(page, `playground refused for want of balance at ${width} px`);
      await screenshots(page, 'playground-no-balance', width);
      await page.locator('header select').selectOption({ label: 'default (owner)' });
      await closeClean(page);
    });

    test(`at ${width} px: a panel that failed to load offers Retry; an ended session returns to its page; another's invitation`, T, async () => {
      const page = await newPage(rig.browser, width);
      await signIn(page);
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

      // The network fails for the keys: the panel says so and offers Retry.
      const keysCall = /\/console\/api\/teams\/[^/]+\/keys$/;
      await page.route(keysCall, (route) => route.abort('internetdisconnected'));
      await page.getByRole('link', { name: 'Models' }).click();
      await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'API keys' }).click();
      const retry = page.getByRole('button', { name: 'Retry loading the keys' });
      await retry.waitFor();
      await page.getByRole('alert').filter({ hasText: 'Could not load the keys' }).waitFor();
      assert.equal(await page.getByText('Loading the keys…').count(), 0, 'not left loading');
      await assertAccessible(page, `keys page after a network failure at ${width} px`);
      await screenshots(page, 'keys-retry', width);
      await page.unroute(keysCall);
      await retry.click();
      await page.getByRole('region', { name: 'API keys' }).waitFor();
      assert.equal(await retry.count(), 0);

      // The session ends (the operator ends it): the next call lands on "Your session ended".
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      // The page's own calls done first: one still in flight would meet the ended session itself.
      // Its panels load one after another, and on a loaded machine the network can fall quiet
      // between two of them: every panel must have left "Loading…" too.
      await page.waitForFunction(() => !document.body.innerText.includes('Loading '));
      await page.waitForLoadState('networkidle');
      await ok('users', 'sessions-end', OWNER);
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.waitForURL(`${rig.gw.baseURL}/console/signin?ended=1&return_to=%2Fconsole%2Faudit`);
      await page.getByRole('heading', { name: 'Your session ended', level: 1 }).waitFor();
      await page.getByText('Sign in with a sign-in link from your operator').waitFor();
      assert.equal(await page.getByRole('link', { name: /identity provider/ }).count(), 0, 'no provider is configured');
      await assertAccessible(page, `session ended at ${width} px`);
      await screenshots(page, 'session-ended', width);
      // Signed in again with a new link: back on the page the session ended on.
      await signIn(page);
      await page.waitForURL(`${rig.gw.baseURL}/console/audit`);
      await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();

      // An invitation for someone else: nothing of it is shown, and nothing is joined.
      const token = (await ok('invites', 'create', 'research', '--role', 'admin', '--email', 'someone@else.test')).stdout.trim();
      await page.goto(`${rig.gw.baseURL}/console/invite?token=${token}`);
      await page.getByRole('heading', { name: 'Invitation', level: 1 }).waitFor();
      const refused = page.getByRole('alert').filter({ hasText: 'This invitation cannot be used by' });
      await refused.waitFor();
      assert.doesNotMatch(await page.locator('main').textContent(), /research|admin/, 'the preview reveals nothing');
      assert.equal(await page.getByRole('button', { name: 'Accept the invitation' }).count(), 0);
      await assertAccessible(page, `another's invitation at ${width} px`);
      await closeClean(page);
    });
  }
});
