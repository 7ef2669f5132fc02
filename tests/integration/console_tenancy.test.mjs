// Roles and invitations that must not outlive what granted them, and membership changes that
// must not race:
//   - an invitation works only while its maker may still invite to its role: an admin removed from
//     the team, or made viewer, has their open invitations refused (409 conflict); the operator's
//     stay valid;
//   - on PostgreSQL with two gateways (the slow `postgres` tier), 25 rounds each: one single-use
//     invitation accepted at once on both gateways joins one person (the other gets 409), and two
//     owners demoting themselves at once on both leave the team one owner (the other gets 409).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { request, linkToken, consoleSession } from '../fixtures/console.mjs';
import { startGateway, standardConfig, closedPort, adminOf, assertError } from '../fixtures/gateway.mjs';

const ROUNDS = 25;

/** The token of an invitation `maker` makes in `team` for `role`. */
async function invite(maker, team, role) {
  const made = await maker.call('POST', `/console/api/teams/${team}/invitations`, { role });
  assert.equal(made.status, 201, made.text);
  return made.json.token;
}

describe('invitations follow their maker\'s role', () => {
  let gw;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const signedIn = async (email) => consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));

  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    gw = await startGateway({ config: standardConfig(dead, dead, { gateway: { auth: 'required' } }) });
    await ok('teams', 'create', 'crew');
  });
  after(async () => { await gw?.stop(); });

  test('an admin removed from the team cannot rejoin with their own open invitation', async () => {
    const admin = await signedIn('gone@crew.example.com');
    await ok('members', 'add', 'crew', 'gone@crew.example.com', '--role', 'admin');
    const team = await admin.teamId('crew');
    const token = await invite(admin, team, 'admin');
    await ok('members', 'remove', 'crew', 'gone@crew.example.com');
    const back = await admin.call('POST', '/console/api/invitations/accept', { token });
    assertError(back, { status: 409, code: 'conflict' });
    assert.match(back.json.error.message, /may no longer invite/);
  });

  test('an admin made viewer has their admin invitations refused; a member invitation of an admin still made by one works', async () => {
    const demoted = await signedIn('demoted@crew.example.com');
    const steady = await signedIn('steady@crew.example.com');
    await ok('members', 'add', 'crew', 'demoted@crew.example.com', '--role', 'admin');
    await ok('members', 'add', 'crew', 'steady@crew.example.com', '--role', 'admin');
    const team = await demoted.teamId('crew');
    const stale = await invite(demoted, team, 'admin');
    const fine = await invite(steady, team, 'member');
    await ok('members', 'role', 'crew', 'demoted@crew.example.com', 'viewer');
    const guest = await signedIn('guest@crew.example.com');
    assertError(await guest.call('POST', '/console/api/invitations/accept', { token: stale }), { status: 409, code: 'conflict' });
    const joined = await guest.call('POST', '/console/api/invitations/accept', { token: fine });
    assert.equal(joined.status, 200, joined.text);
  });

  test('the operator\'s invitations stay valid', async () => {
    const token = (await ok('invites', 'create', 'crew', '--role', 'admin')).stdout.trim();
    const newcomer = await signedIn('newcomer@crew.example.com');
    const r = await newcomer.call('POST', '/console/api/invitations/accept', { token });
    assert.equal(r.status, 200, r.text);
  });
});

const PG = ENGINES.find((e) => e.name === 'postgres');
describe('membership races on PostgreSQL, two gateways', { skip: PG.skip, timeout: 180_000 }, () => {
  let store;
  let a;
  let b;
  const { ok } = adminOf(() => ({ configPath: a.configPath, env: store.env }));
  const signedIn = async (gw, email) => consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));

  before(async () => {
    store = await PG.start();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.storage = store.storage;
    a = await startGateway({ config, env: store.env });
    b = await startGateway({ config, env: store.env });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    store?.stop();
  });

  test(`one single-use invitation accepted at once on both gateways joins one person (${ROUNDS} rounds)`, async () => {
    const onA = await signedIn(a, 'first@race.example.com');
    const onB = await signedIn(b, 'second@race.example.com');
    for (let round = 0; round < ROUNDS; round += 1) {
      const name = `inv-race-${round}`;
      await ok('teams', 'create', name);
      const token = (await ok('invites', 'create', name, '--role', 'member')).stdout.trim();
      const answers = await Promise.all([
        onA.call('POST', '/console/api/invitations/accept', { token }),
        onB.call('POST', '/console/api/invitations/accept', { token }),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 409], `round ${round}: ${answers.map((r) => r.text).join(' | ')}`);
      const members = JSON.parse((await ok('members', 'list', name, '--json')).stdout);
      assert.equal(members.length, 1, `round ${round}: ${JSON.stringify(members)}`);
    }
  });

  test(`two owners demoting themselves at once on both gateways leave one owner (${ROUNDS} rounds)`, async () => {
    const x = await signedIn(a, 'x@race.example.com');
    const y = await signedIn(b, 'y@race.example.com');
    for (let round = 0; round < ROUNDS; round += 1) {
      const name = `own-race-${round}`;
      await ok('teams', 'create', name);
      await ok('members', 'add', name, 'x@race.example.com', '--role', 'owner');
      await ok('members', 'add', name, 'y@race.example.com', '--role', 'owner');
      const team = await x.teamId(name);
      const answers = await Promise.all([
        x.call('PATCH', `/console/api/teams/${team}/members/${x.me.user.id}`, { role: 'member' }),
        y.call('PATCH', `/console/api/teams/${team}/members/${y.me.user.id}`, { role: 'member' }),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 409], `round ${round}: ${answers.map((r) => r.text).join(' | ')}`);
      const members = JSON.parse((await ok('members', 'list', name, '--json')).stdout);
      assert.equal(members.filter((m) => m.role === 'owner').length, 1, `round ${round}`);
    }
  });
});
