// The console's rules for names, limits and credentials, over HTTP and `tollgate admin`: names
// holding invisible characters are refused, stored in NFC, and refused when they look like an
// existing team's or active key's (names kept from before that rule are listed by `tollgate
// migrate` and keep working); a user creates at most [console] max_teams_per_user teams; a
// suspended team still lets its members take access away; two session cookies sign no one in;
// a public_url with its default port written out is the origin browsers send.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, assertError, runTollgate, toToml, writeTempFile,
} from '../fixtures/gateway.mjs';
import { request, linkToken, consoleSession } from '../fixtures/console.mjs';

const LOOK_ALIKE = 'd\u0435fault'; // a Cyrillic е

for (const engine of ENGINES) {
  describe(`console names on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let gw;
    const { admin, ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const signedIn = async (email) =>
      consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));

    before(async () => {
      store = await engine.start();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
      config.storage = store.storage;
      config.console = { owner_email: 'owner@names.test' };
      gw = await startGateway({ config, env: store.env });
    });

    after(async () => {
      await gw?.stop();
      store?.stop();
    });

    test('invisible characters are refused, names are stored in NFC, look-alikes are a conflict naming the existing one', async () => {
      const s = await signedIn('owner@names.test');
      const made = await s.call('POST', '/console/api/teams', { name: 'cafe\u0301' });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.json.name, 'caf\u00e9', 'stored composed');
      for (const name of ['evil\u202Etxt', 'zero\u200Bwidth', 'private\uE000', 'unassigned\u0378']) {
        const e = assertError(await s.call('POST', '/console/api/teams', { name }),
          { status: 400, code: 'invalid_value', type: 'invalid_request_error' });
        assert.match(e.message, /^a team name must not contain U\+[0-9A-F]{4}/);
      }
      const like = assertError(await s.call('POST', '/console/api/teams', { name: LOOK_ALIKE }),
        { status: 409, code: 'conflict', type: 'invalid_request_error', param: '' });
      assert.equal(like.message, `a team name "${LOOK_ALIKE}" looks like that of the existing team "default"`);
      assertError(await s.call('POST', '/console/api/teams', { name: 'caf\u00e9' }), { status: 409, code: 'conflict' });

      const team = made.json.id;
      assert.equal((await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'laptop' })).status, 201);
      const key = assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'l\u0430ptop' }),
        { status: 409, code: 'conflict' });
      assert.match(key.message, /looks like that of the active key "laptop"/);
      assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'x\u200Dy' }),
        { status: 400, code: 'invalid_value' });
    });

    test('tollgate admin follows the same rules', async () => {
      const team = await admin('teams', 'create', LOOK_ALIKE);
      assert.equal(team.code, 1);
      assert.match(team.stderr, /looks like that of the existing team "default"/);
      const key = await admin('keys', 'create', '--team', 'default', '--name', 'k\u202E');
      assert.equal(key.code, 1);
      assert.match(key.stderr, /must not contain U\+202E/);
      await ok('teams', 'create', 'comp\u006F\u0301se');
      assert.match((await ok('teams', 'list')).stdout, /^comp\u00F3se\t/m);
    });

    test('names kept from before the rule keep working, are listed by tollgate migrate and shown escaped', async () => {
      // As a store written before skeletons were: the rows have none.
      store.sql(`INSERT INTO teams (id, name, state, created_at) VALUES ('legacy-1', '${LOOK_ALIKE}', 'active', 0)`);
      store.sql("INSERT INTO teams (id, name, state, created_at) VALUES ('legacy-2', 'evil\u202Etxt', 'active', 0)");
      const m = await runTollgate(['migrate', '--config', gw.configPath], { env: store.env });
      assert.equal(m.code, 0, m.stderr);
      assert.match(m.stdout, /names that look like an earlier one/);
      assert.ok(m.stdout.includes(`  team "${LOOK_ALIKE}" looks like team "default"\n`), m.stdout);
      const made = await ok('keys', 'create', '--team', LOOK_ALIKE, '--name', 'still works');
      assert.match(made.stdout, /^sk-tollgate-/);
      const listed = (await ok('teams', 'list')).stdout;
      assert.match(listed, /^evil\\u202Etxt\t/m, 'a format character is shown escaped');
      assert.ok(!listed.includes('\u202E'));
    });
  });
}

describe('console limits, suspended teams and session cookies', () => {
  let gw;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const signedIn = async (email) =>
    consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));

  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.console = { max_teams_per_user: 2 };
    gw = await startGateway({ config });
  });
  after(async () => { await gw?.stop(); });

  test('a user creates teams up to max_teams_per_user; the operator past it', async () => {
    const s = await signedIn('founder@limits.test');
    for (const name of ['first', 'second']) {
      assert.equal((await s.call('POST', '/console/api/teams', { name })).status, 201);
    }
    const e = assertError(await s.call('POST', '/console/api/teams', { name: 'third' }),
      { status: 403, code: 'team_limit_reached', type: 'permission_error', param: '' });
    assert.match(e.message, /2 teams/);
    await ok('teams', 'create', 'third');
    // Owning one less (another owner took over) makes room again.
    await ok('users', 'add', 'heir@limits.test');
    await ok('members', 'add', 'second', 'heir@limits.test', '--role', 'owner');
    await ok('members', 'role', 'second', 'founder@limits.test', 'admin');
    assert.equal((await s.call('POST', '/console/api/teams', { name: 'fourth' })).status, 201);
  });

  test('a suspended team lets its members revoke keys and invitations, remove members and lower roles; nothing else', async () => {
    await ok('teams', 'create', 'paused');
    const who = {};
    for (const role of ['owner', 'admin', 'member', 'viewer']) {
      who[role] = await signedIn(`${role}@paused.test`);
      await ok('members', 'add', 'paused', `${role}@paused.test`, '--role', role);
    }
    const extra = await signedIn('extra@paused.test');
    await ok('members', 'add', 'paused', 'extra@paused.test', '--role', 'member');
    const team = await who.owner.teamId('paused');
    const T = `/console/api/teams/${team}`;
    const leaked = (await who.owner.call('POST', `${T}/keys`, { name: 'leaked' })).json.key;
    const mine = (await who.member.call('POST', `${T}/keys`, { name: 'mine' })).json.key;
    const invite = (await who.admin.call('POST', `${T}/invitations`, { role: 'viewer' })).json.invitation;
    await ok('teams', 'suspend', 'paused');

    // The roles allowed on an active team, no others.
    assertError(await who.viewer.call('DELETE', `${T}/keys/${leaked.public_id}`), { status: 403, code: 'role_forbidden' });
    assertError(await who.member.call('DELETE', `${T}/invitations/${invite.id}`), { status: 403, code: 'role_forbidden' });
    assert.equal((await who.owner.call('DELETE', `${T}/keys/${leaked.public_id}`)).status, 200);
    assert.equal((await who.member.call('DELETE', `${T}/keys/${mine.public_id}`)).status, 200);
    assert.equal((await who.admin.call('DELETE', `${T}/invitations/${invite.id}`)).status, 200);
    const lowered = await who.owner.call('PATCH', `${T}/members/${who.admin.me.user.id}`, { role: 'viewer' });
    assert.equal(lowered.status, 200, lowered.text);
    assertError(await who.owner.call('PATCH', `${T}/members/${who.member.me.user.id}`, { role: 'admin' }),
      { status: 403, code: 'team_suspended' });
    assertError(await who.owner.call('PATCH', `${T}/members/${who.member.me.user.id}`, { role: 'member' }),
      { status: 403, code: 'team_suspended' });
    assert.equal((await who.owner.call('DELETE', `${T}/members/${extra.me.user.id}`)).status, 200);

    // Nothing that gives access: no key, no invitation; the team stays suspended.
    assertError(await who.owner.call('POST', `${T}/keys`, { name: 'new' }), { status: 403, code: 'team_suspended' });
    assertError(await who.owner.call('POST', `${T}/invitations`, { role: 'viewer' }), { status: 403, code: 'team_suspended' });
    const shown = await who.owner.call('GET', T);
    assert.equal(shown.json.state, 'suspended');
    const keys = (await who.owner.call('GET', `${T}/keys`)).json;
    assert.deepEqual(keys.map((k) => k.state), ['revoked', 'revoked']);
  });

  test('two session cookies sign no one in; every cookie pair is read', async () => {
    const s = await signedIn('cookies@acme.test');
    const [name, value] = s.cookie.split('=');
    const planted = await signedIn('planted@acme.test');
    for (const cookie of [`${planted.cookie}; ${s.cookie}`, `${s.cookie}; ${planted.cookie}`, `${s.cookie}; ${s.cookie}`]) {
      assertError(await s.call('GET', '/console/api/me', undefined, { cookie }), { status: 401, code: 'not_signed_in' });
    }
    const many = Array.from({ length: 100 }, (_, i) => `c${i}=v`).join('; ');
    const late = await s.call('GET', '/console/api/me', undefined, { cookie: `${many}; ${name}=${value}` });
    assert.equal(late.status, 200, late.text);
    assert.equal(late.json.user.email, 'cookies@acme.test');
    assertError(await s.call('GET', '/console/api/me', undefined, { cookie: `${many}; ${name}=${value}; ${planted.cookie}` }),
      { status: 401, code: 'not_signed_in' });
  });
});

describe('a public_url with its default port', () => {
  let gw;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const ORIGIN = 'https://console.example';

  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.console = { public_url: 'HTTPS://Console.Example:443/' };
    gw = await startGateway({ config });
  });
  after(async () => { await gw?.stop(); });

  test('is the origin a browser sends: changes from it pass the CSRF check', async () => {
    const link = (await ok('login-link', 'tls@acme.test')).stdout;
    assert.ok(link.startsWith(`${ORIGIN}/console/signin?token=`), link);
    const r = await request(gw.baseURL, 'POST', '/console/api/auth/link',
      { headers: { origin: ORIGIN }, body: { token: linkToken(link) } });
    assert.equal(r.status, 200, r.text);
    const cookie = r.setCookies.find((c) => c.startsWith('__Host-tollgate_session=')).split(';')[0];
    const me = await request(gw.baseURL, 'GET', '/console/api/me', { headers: { cookie } });
    const made = await request(gw.baseURL, 'POST', '/console/api/teams', {
      headers: { cookie, origin: ORIGIN, 'x-csrf-token': me.json.csrf_token },
      body: { name: 'over-tls' },
    });
    assert.equal(made.status, 201, made.text);
    const explicit = await request(gw.baseURL, 'POST', '/console/api/teams', {
      headers: { cookie, origin: `${ORIGIN}:443`, 'x-csrf-token': me.json.csrf_token },
      body: { name: 'never' },
    });
    assertError(explicit, { status: 403, code: 'csrf_failed' });
  });

  test('check-config refuses a public_url with a path, saying which', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead);
    config.console = { public_url: 'https://console.example/tollgate' };
    const file = writeTempFile('tollgate.toml', toToml(config));
    const r = await runTollgate(['check-config', file]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /console\.public_url: must be an origin \(scheme, host and port\) without a path, not "\/tollgate"/);
  });
});
