// The console's back end over HTTP, as a browser and curl use it: one-time sign-in links (a GET
// page, a POST that signs in), session cookies and CSRF, the JSON API checked against every role
// (and against another team's ids, which must look like nothing at all), keys made in the console
// and used on /v1, the playground billed and tagged, sessions that expire and end, the audit log.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError, sleep, waitFor,
} from '../fixtures/gateway.mjs';
import { request, linkToken, consoleSession } from '../fixtures/console.mjs';

describe('console back end', () => {
  let mock;
  let gw;
  const { admin, ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));

  /** A signed-in session of `email` (the user is added when new). */
  const signedIn = async (email) => {
    const link = (await ok('login-link', email)).stdout;
    return consoleSession(gw).signIn(linkToken(link));
  };

  before(async () => {
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
    config.console = { owner_email: 'founder@acme.test' };
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('the first start prints a sign-in link for the owner of team default; a key made in the console works on /v1', async () => {
    assert.match(gw.stdout, /sign in to the console as founder@acme\.test/);
    const page = await request(gw.baseURL, 'GET', `/console/signin?token=${linkToken(gw.stdout)}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    assert.match(page.text, /<form method="post" action="\/console\/api\/auth\/link">/);
    assert.match(page.headers.get('content-security-policy'), /default-src 'none'/);
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    // The GET used nothing up: the link still signs in, once.
    const s = await consoleSession(gw).signIn(linkToken(gw.stdout));
    assert.equal(s.me.user.email, 'founder@acme.test');
    const team = s.me.teams.find((t) => t.name === 'default');
    assert.equal(team.role, 'owner');
    assert.ok(team.actions.includes('create_key') && team.actions.includes('use_playground'));
    const again = await request(gw.baseURL, 'POST', '/console/api/auth/link',
      { headers: { origin: gw.baseURL }, body: { token: linkToken(gw.stdout) } });
    assertError(again, { status: 401, code: 'sign_in_failed' });

    const made = await s.call('POST', `/console/api/teams/${team.id}/keys`, { name: 'laptop' });
    assert.equal(made.status, 201, made.text);
    assert.match(made.json.secret, /^sk-tollgate-/);
    assert.equal(made.json.key.created_by, 'founder@acme.test');
    await ok('teams', 'topup', 'default', '1');
    const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'),
      { headers: { authorization: `Bearer ${made.json.secret}` } });
    assert.equal(r.status, 200, r.text);
    const listed = await s.call('GET', `/console/api/teams/${team.id}/keys`);
    const key = listed.json.find((k) => k.public_id === made.json.key.public_id);
    assert.equal(key.state, 'active');
    assert.ok(!('secret' in key) && !listed.text.includes(made.json.secret), 'secrets are never listed');
    // Revoked in the console: refused on the next request.
    const revoked = await s.call('DELETE', `/console/api/teams/${team.id}/keys/${key.public_id}`);
    assert.equal(revoked.status, 200, revoked.text);
    const after = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'),
      { headers: { authorization: `Bearer ${made.json.secret}` } });
    assertError(after, { status: 401, code: 'revoked_api_key' });
  });

  test('a sign-in link is a form POST from the console\'s origin, single use, and sets an HttpOnly Lax cookie', async () => {
    const token = linkToken((await ok('login-link', 'form@acme.test')).stdout);
    const foreign = await request(gw.baseURL, 'POST', '/console/api/auth/link', {
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assertError(foreign, { status: 403, code: 'csrf_failed' });
    const r = await request(gw.baseURL, 'POST', '/console/api/auth/link', {
      headers: { origin: gw.baseURL, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/console/');
    const cookie = r.setCookies.find((c) => c.startsWith('tollgate_session='));
    assert.match(cookie, /; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/, 'no Secure over http');
    // The same link again from the page's form: back to the page, which says why; no JSON error.
    const used = await request(gw.baseURL, 'POST', '/console/api/auth/link', {
      headers: { origin: gw.baseURL, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assert.equal(used.status, 303, used.text);
    assert.equal(used.headers.get('location'), '/console/signin?error=invalid_link');
    assert.equal(used.setCookies.length, 0, 'no session cookie');
    const page = await request(gw.baseURL, 'GET', '/console/signin?error=invalid_link');
    assert.match(page.text, /<p class="error">This sign-in link has expired or has already been used/);
    const unknown = await request(gw.baseURL, 'POST', '/console/api/auth/link',
      { headers: { origin: gw.baseURL }, body: { token: 'll-tollgate-' + 'x'.repeat(32) } });
    assertError(unknown, { status: 401, code: 'sign_in_failed' });
    const failures = JSON.parse((await ok('audit', 'list', '--json')).stdout)
      .filter((e) => e.action === 'signin.failed');
    assert.ok(failures.length >= 1, 'a refused sign-in is audited');
  });

  test('sessions and API keys are separate credentials; changes need the CSRF token and the console\'s origin', async () => {
    const s = await signedIn('csrf@acme.test');
    await ok('teams', 'create', 'csrf-team');
    await ok('members', 'add', 'csrf-team', 'csrf@acme.test', '--role', 'owner');
    const team = await s.teamId('csrf-team');
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' }, { csrf: false }),
      { status: 403, code: 'csrf_failed' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' }, { origin: 'https://evil.example' }),
      { status: 403, code: 'csrf_failed' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' }, { origin: null }),
      { status: 403, code: 'csrf_failed' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' }, { headers: { 'x-csrf-token': '0'.repeat(64) } }),
      { status: 403, code: 'csrf_failed' });
    assertError(await s.call('GET', '/console/api/me', undefined, { cookie: null }), { status: 401, code: 'not_signed_in' });
    // An API key never opens the console, and a session cookie never authorizes /v1.
    const key = (await ok('keys', 'create', '--team', 'csrf-team', '--name', 'k')).stdout.trim();
    assertError(await request(gw.baseURL, 'GET', '/console/api/me', { headers: { authorization: `Bearer ${key}` } }),
      { status: 401, code: 'not_signed_in' });
    assertError(await request(gw.baseURL, 'POST', '/v1/chat/completions', { headers: { cookie: s.cookie }, body: chatBody('hi') }),
      { status: 401, code: 'missing_api_key' });
    const made = await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' });
    assert.equal(made.status, 201, made.text);
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a', extra: 1 }), { status: 400, code: 'unknown_parameter' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 7 }), { status: 400, code: 'invalid_type' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, {}), { status: 400, code: 'missing_required_parameter' });
    assertError(await s.call('POST', `/console/api/teams/${team}/keys`, { name: 'a' }), { status: 409, code: 'conflict' });
    // Logout ends the session for good.
    assert.equal((await s.call('POST', '/console/api/auth/logout')).status, 200);
    assertError(await s.call('GET', '/console/api/me'), { status: 401, code: 'not_signed_in' });
  });

  test('every call against every role, and another team\'s ids look like nothing', async () => {
    await ok('teams', 'create', 'matrix', '--balance', '1');
    await ok('teams', 'create', 'elsewhere', '--balance', '1');
    const roles = ['owner', 'admin', 'member', 'viewer'];
    const who = {};
    for (const role of roles) {
      who[role] = await signedIn(`${role}@matrix.test`);
      await ok('members', 'add', 'matrix', `${role}@matrix.test`, '--role', role);
    }
    who.stranger = await signedIn('stranger@elsewhere.test');
    await ok('members', 'add', 'elsewhere', 'stranger@elsewhere.test', '--role', 'owner');
    const team = await who.owner.teamId('matrix');
    const other = await who.stranger.teamId('elsewhere');
    const otherKey = JSON.parse((await ok('keys', 'list', '--team', 'elsewhere', '--json')).stdout)[0]
      ?? (await who.stranger.call('POST', `/console/api/teams/${other}/keys`, { name: 'theirs' })).json.key;
    const otherInvite = (await who.stranger.call('POST', `/console/api/teams/${other}/invitations`, { role: 'viewer' })).json.invitation;
    const strangerId = who.stranger.me.user.id;
    const viewerId = who.viewer.me.user.id;
    const T = `/console/api/teams/${team}`;
    // [method, path, body, roles allowed]; a 2xx for those, 403 role_forbidden for the other
    // members, 404 for a non-member.
    const calls = [
      ['GET', T, undefined, roles],
      ['GET', `${T}/members`, undefined, roles],
      ['GET', `${T}/keys`, undefined, roles],
      ['GET', `${T}/spend/summary?by=model`, undefined, roles],
      ['GET', `${T}/spend`, undefined, roles],
      ['GET', `${T}/spend.csv`, undefined, roles],
      ['GET', `${T}/invitations`, undefined, ['owner', 'admin']],
      ['GET', `${T}/audit`, undefined, ['owner', 'admin']],
      ['POST', `${T}/keys`, { name: 'k-ROLE' }, ['owner', 'admin', 'member']],
      ['POST', `${T}/invitations`, { role: 'viewer' }, ['owner', 'admin']],
      ['PATCH', `${T}/members/${viewerId}`, { role: 'viewer' }, ['owner', 'admin']],
      ['POST', `${T}/chat/completions`, chatBody('hi'), ['owner', 'admin', 'member']],
      ['POST', `${T}/resume`, undefined, ['owner']],
    ];
    for (const [method, path, body, allowed] of calls) {
      for (const role of [...roles, 'stranger']) {
        const b = body && JSON.parse(JSON.stringify(body).replace('ROLE', role));
        const r = await who[role].call(method, path, b);
        const what = `${role} ${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`;
        if (role === 'stranger') {
          assertError(r, { status: 404, code: 'resource_not_found' });
        } else if (allowed.includes(role)) {
          assert.ok(r.status >= 200 && r.status < 300, what);
        } else {
          assertError(r, { status: 403, code: 'role_forbidden' });
        }
      }
    }
    // Ids of another team, named under this one: not found, never forbidden.
    for (const [method, path, body] of [
      ['DELETE', `${T}/keys/${otherKey.public_id}`],
      ['DELETE', `${T}/invitations/${otherInvite.id}`],
      ['PATCH', `${T}/members/${strangerId}`, { role: 'viewer' }],
      ['DELETE', `${T}/members/${strangerId}`],
    ]) {
      const r = await who.owner.call(method, path, body);
      assertError(r, { status: 404, code: 'resource_not_found' });
    }
    assertError(await who.owner.call('GET', '/console/api/teams/00000000-0000-0000-0000-000000000000'),
      { status: 404, code: 'resource_not_found' });
    // Their key still works: nothing was done to it.
    const keys = JSON.parse((await ok('keys', 'list', '--team', 'elsewhere', '--json')).stdout);
    assert.ok(keys.every((k) => k.state === 'active'));
    // Money is for those who may read it; the last owner stays.
    // The three playground calls above (owner, admin, member) cost 0.00002 each.
    const shown = (await who.owner.call('GET', T)).json;
    assert.equal(shown.balance, 0.99994);
    assert.equal((await who.viewer.call('GET', T)).json.balance, 0.99994, 'a viewer reads the balance');
    const ownerId = who.owner.me.user.id;
    assertError(await who.owner.call('PATCH', `${T}/members/${ownerId}`, { role: 'admin' }), { status: 409, code: 'conflict' });
    assertError(await who.admin.call('DELETE', `${T}/members/${ownerId}`), { status: 403 });
  });

  test('the playground is billed to the team, tagged, recorded with the user; a viewer and a suspended team cannot', async () => {
    await ok('teams', 'create', 'play', '--balance', '1');
    const member = await signedIn('player@play.test');
    const viewer = await signedIn('watcher@play.test');
    await ok('members', 'add', 'play', 'player@play.test', '--role', 'member');
    await ok('members', 'add', 'play', 'watcher@play.test', '--role', 'viewer');
    const team = await member.teamId('play');
    const r = await member.call('POST', `/console/api/teams/${team}/chat/completions`, chatBody('hi', { 'tollgate::tags': { playground: 'no', feature: 'x' } }));
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.usage['tollgate::cost'] > 0);
    const streamed = await member.call('POST', `/console/api/teams/${team}/chat/completions`, chatBody('hi', { stream: true }));
    assert.equal(streamed.status, 200);
    assert.match(streamed.text, /data: \[DONE\]/);
    const rows = JSON.parse((await ok('spend', 'list', '--team', 'play', '--json')).stdout);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.tags.playground, 'true');
      assert.equal(row.key, null);
      assert.equal(row.user_id, member.me.user.id);
    }
    const byUser = await member.call('GET', `/console/api/teams/${team}/spend/summary?by=user`);
    assert.deepEqual(byUser.json.data.map((d) => [d.user, d.requests]), [['player@play.test', 2]]);
    assertError(await viewer.call('POST', `/console/api/teams/${team}/chat/completions`, chatBody('hi')),
      { status: 403, code: 'role_forbidden' });
    await ok('teams', 'suspend', 'play');
    assertError(await member.call('POST', `/console/api/teams/${team}/chat/completions`, chatBody('hi')),
      { status: 403, code: 'team_suspended' });
    // Still readable.
    assert.equal((await viewer.call('GET', `/console/api/teams/${team}/spend`)).status, 200);
    assert.equal((await member.call('GET', `/console/api/teams/${team}/keys`)).status, 200);
  });

  test('a member removed while signed in loses the team at once; invitations join a team', async () => {
    await ok('teams', 'create', 'club');
    const owner = await signedIn('boss@club.test');
    await ok('members', 'add', 'club', 'boss@club.test', '--role', 'owner');
    const guest = await signedIn('guest@club.test');
    const team = await owner.teamId('club');
    const inv = await owner.call('POST', `/console/api/teams/${team}/invitations`, { role: 'member', email: 'guest@club.test' });
    assert.equal(inv.status, 201, inv.text);
    assert.match(inv.json.link, /\/console\/invite\?token=inv-tollgate-/);
    const joined = await guest.call('POST', '/console/api/invitations/accept', { token: inv.json.token });
    assert.equal(joined.status, 200, joined.text);
    assert.ok(joined.json.some((t) => t.id === team && t.role === 'member'));
    assert.equal((await guest.call('GET', `/console/api/teams/${team}/keys`)).status, 200);
    const removed = await owner.call('DELETE', `/console/api/teams/${team}/members/${guest.me.user.id}`);
    assert.equal(removed.status, 200, removed.text);
    assertError(await guest.call('GET', `/console/api/teams/${team}/keys`), { status: 404, code: 'resource_not_found' });
    const audit = await owner.call('GET', `/console/api/teams/${team}/audit`);
    const actions = audit.json.data.map((e) => e.action);
    for (const a of ['invitation.created', 'invitation.accepted', 'member.removed']) assert.ok(actions.includes(a), `${a} in ${actions}`);
    assert.ok(audit.json.data.every((e) => e.source === '127.0.0.1' || e.source === 'cli'));
    const cli = JSON.parse((await ok('audit', 'list', '--team', 'club', '--json')).stdout);
    assert.deepEqual(cli.map((e) => e.id).slice(0, 3), audit.json.data.map((e) => e.id).slice(0, 3));
  });

  test('a user may create a team (owner, balance 0); a taken name is a conflict', async () => {
    const s = await signedIn('founder2@new.test');
    const made = await s.call('POST', '/console/api/teams', { name: 'brand-new' });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.role, 'owner');
    const shown = await s.call('GET', `/console/api/teams/${made.json.id}`);
    assert.equal(shown.json.balance, 0);
    assertError(await s.call('POST', '/console/api/teams', { name: 'brand-new' }), { status: 409, code: 'conflict' });
    const models = await s.call('GET', '/console/api/models');
    assert.ok(models.json.data.some((m) => m.id === 'mock_model' && m.endpoint === 'chat'));
  });
});

describe('console sessions expire', () => {
  let gw;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.console = { session_idle_seconds: 1 };
    gw = await startGateway({ config });
  });
  after(async () => { await gw?.stop(); });

  test('an idle session ends', async () => {
    const s = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'idle@acme.test')).stdout));
    assert.equal((await s.call('GET', '/console/api/me')).status, 200);
    await sleep(2200);
    assertError(await s.call('GET', '/console/api/me'), { status: 401, code: 'not_signed_in' });
  });
});

const PG = ENGINES.find((e) => e.name === 'postgres');
describe('console on PostgreSQL, two gateways', { skip: PG.skip }, () => {
  let store;
  let a;
  let b;
  const { ok } = adminOf(() => ({ configPath: a.configPath, env: store.env }));
  before(async () => {
    store = await PG.start();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const mock = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock, dead, { gateway: { auth: 'required' } });
    config.storage = store.storage;
    a = await startGateway({ config, env: store.env });
    b = await startGateway({ config, env: store.env });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    store?.stop();
  });

  test('a session made on one gateway works on the other; a key revoked on one is refused at once on the other', async () => {
    await ok('teams', 'create', 'shared', '--balance', '1');
    const onA = await consoleSession(a).signIn(linkToken((await ok('login-link', 'ops@shared.test')).stdout));
    await ok('members', 'add', 'shared', 'ops@shared.test', '--role', 'owner');
    const onB = consoleSession(b);
    onB.cookie = onA.cookie;
    onB.csrf = onA.csrf;
    const team = await onB.teamId('shared');
    const made = await onB.call('POST', `/console/api/teams/${team}/keys`, { name: 'svc' });
    assert.equal(made.status, 201, made.text);
    const bearer = { authorization: `Bearer ${made.json.secret}` };
    await waitFor(async () => (await postJson(b.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer })).status !== 401);
    const revoked = await onA.call('DELETE', `/console/api/teams/${team}/keys/${made.json.key.public_id}`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.json.gateways_lagging, 0);
    assertError(await postJson(b.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer }),
      { status: 401, code: 'revoked_api_key' });
    // Logging out on B ends the session on A too.
    assert.equal((await onB.call('POST', '/console/api/auth/logout')).status, 200);
    assertError(await onA.call('GET', '/console/api/me'), { status: 401, code: 'not_signed_in' });
  });
});

describe('the console on a listener of its own, or off', () => {
  let gw;
  let off;
  let consoleURL;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.console = { listen: '127.0.0.1:0' };
    gw = await startGateway({ config });
    const port = /^tollgate console listening on 127\.0\.0\.1:(\d+)$/m.exec(gw.stdout)?.[1];
    assert.ok(port, `no console listener line in: ${gw.stdout}`);
    consoleURL = `http://127.0.0.1:${port}`;
    const disabled = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    disabled.console = { enabled: false };
    off = await startGateway({ config: disabled });
  });
  after(async () => {
    await gw?.stop();
    await off?.stop();
  });

  test('the console answers only on its listener, and the inference API only on the gateway\'s', async () => {
    assertError(await request(gw.baseURL, 'GET', '/console/api/me'), { status: 404, code: 'not_found' });
    const link = (await ok('login-link', 'own@acme.test')).stdout;
    assert.ok(link.startsWith(`http://127.0.0.1:`) && !link.startsWith(gw.baseURL), 'the link names the console\'s listener');
    const s = await consoleSession({ baseURL: consoleURL }).signIn(linkToken(link));
    assert.equal(s.me.user.email, 'own@acme.test');
    assertError(await request(consoleURL, 'GET', '/v1/models'), { status: 404, code: 'not_found' });
    assert.equal((await request(consoleURL, 'GET', '/health')).status, 200);
  });

  test('enabled = false removes every console route', async () => {
    assertError(await request(off.baseURL, 'GET', '/console/api/me'), { status: 404, code: 'not_found' });
    assertError(await request(off.baseURL, 'GET', '/console/signin'), { status: 404, code: 'not_found' });
    assert.doesNotMatch(off.stdout, /sign in to the console/);
  });
});
