// End-to-end: a member's role on the Team page in Chromium (playwright-core) against the real
// binary, and the keys it stops. At 1440 and 375 px wide: ArrowDown on a member's role select
// changes nothing until Save; Save asks for a confirmation that says how many of the member's
// keys stop working ("carol's 2 keys stop working now"); confirmed, a notice says it is done, and
// the Keys page shows those keys inactive, with why; a key whose creator left the team shows
// inactive too, with its own reason. axe-core on the dialog and the pages, no CSP violation.
// Screenshots beside the binary (console-screenshots/team-role-*.png, keys-inactive-*.png).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { consoleSession, linkToken } from '../fixtures/console.mjs';
import {
  BROWSER_SKIP, assertAccessible, consoleRig, closeClean, newPage, screenshots, signInByLink,
} from '../fixtures/browser.mjs';

const T = { timeout: 90_000 };
const OWNER = 'owner@roles.test';

describe('role changes and inactive keys in Chromium', { skip: BROWSER_SKIP }, () => {
  const rig = consoleRig(OWNER);
  const { ok } = rig;

  /** A member of team default named `name`, with `keys` keys of their own made in the console
   * (`PREFIX-key-0`, …). */
  async function memberWithKeys(email, name, keys, keyPrefix = name) {
    await ok('users', 'add', email, '--name', name);
    await ok('members', 'add', 'default', email, '--role', 'member');
    const s = await consoleSession(rig.gw).signIn(linkToken((await ok('login-link', email)).stdout));
    const team = await s.teamId('default');
    for (let i = 0; i < keys; i++) {
      const r = await s.call('POST', `/console/api/teams/${team}/keys`, { name: `${keyPrefix}-key-${i}` });
      assert.equal(r.status, 201, r.text);
    }
  }

  before(async () => {
    await rig.start();
    // erin made a key, then left the team.
    await memberWithKeys('erin@roles.test', 'erin', 1);
    await ok('members', 'remove', 'default', 'erin@roles.test');
  });
  after(() => rig.stop());

  /** A page signed in as the owner, on the console's first page. */
  async function ownerPage(width) {
    const page = await newPage(rig.browser, width);
    await signInByLink(page, rig.gw.baseURL, linkToken((await ok('login-link', OWNER)).stdout));
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    return page;
  }

  const roleOf = async (email) =>
    JSON.parse((await ok('members', 'list', 'default', '--json')).stdout).find((m) => m.email === email)?.role;

  for (const width of [1440, 375]) {
    test(`at ${width} px: a role change needs Save and a confirmation that names the keys it stops; the keys then show inactive`, T, async () => {
      const carol = `carol-${width}@roles.test`;
      await memberWithKeys(carol, 'carol', 2, `carol-${width}`);
      const page = await ownerPage(width);
      let patches = 0;
      page.on('request', (r) => {
        if (r.method() === 'PATCH') patches += 1;
      });
      await page.getByRole('link', { name: 'Team', exact: true }).click();
      const row = page.locator('table.members tbody tr', { hasText: carol });
      const select = row.getByRole('combobox', { name: `Role of ${carol}` });
      await select.waitFor();
      assert.equal(await select.inputValue(), 'member');

      // ArrowDown moves the select to viewer, and saves nothing.
      await select.focus();
      await page.keyboard.press('ArrowDown');
      assert.equal(await select.inputValue(), 'viewer');
      await page.waitForTimeout(300);
      assert.equal(patches, 0, 'no change sent');
      assert.equal(await roleOf(carol), 'member');

      // Save asks first, saying what the change stops.
      await row.getByRole('button', { name: `Save the role of ${carol}` }).click();
      const dialog = page.getByRole('dialog', { name: `Make ${carol} a viewer?` });
      await dialog.waitFor();
      assert.match(await dialog.locator('[data-role-effect]').textContent(), /carol's 2 keys stop working now\./);
      await assertAccessible(page, `role change confirmation at ${width} px`);
      await screenshots(page, 'team-role-confirm', width);
      // Cancel keeps the role.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      assert.equal(patches, 0);
      assert.equal(await roleOf(carol), 'member');

      await row.getByRole('button', { name: `Save the role of ${carol}` }).click();
      await dialog.getByRole('button', { name: 'Make a viewer' }).click();
      await page.locator('[data-notice]', { hasText: `${carol} is now a viewer of team default.` }).waitFor();
      assert.equal(patches, 1);
      assert.equal(await roleOf(carol), 'viewer');
      assert.equal(await page.locator('table.members tbody tr', { hasText: carol }).getByRole('combobox').inputValue(), 'viewer');
      await assertAccessible(page, `team page after a role change at ${width} px`);

      // The Keys page: carol's keys are inactive, and say why; erin's (she left) too.
      await page.getByRole('link', { name: 'API keys' }).click();
      for (const name of [`carol-${width}-key-0`, `carol-${width}-key-1`]) {
        const key = page.locator('table.keys tbody tr', { hasText: name });
        await key.getByText('inactive', { exact: true }).waitFor();
        assert.equal((await key.locator('[data-inactive-reason]').textContent()).trim(), "(its creator's role may no longer use keys)");
        // Not revoked: it may still be, before it works again.
        await key.getByRole('button', { name: `Revoke ${name}` }).waitFor();
      }
      const erin = page.locator('table.keys tbody tr', { hasText: 'erin-key-0' });
      await erin.getByText('inactive', { exact: true }).waitFor();
      assert.equal((await erin.locator('[data-inactive-reason]').textContent()).trim(), '(its creator is no longer a member of the team)');
      await assertAccessible(page, `keys page with inactive keys at ${width} px`);
      await screenshots(page, 'keys-inactive', width);
      await closeClean(page);
    });
  }
});
