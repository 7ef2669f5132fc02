// The console API's additions for the console's pages: why a key that is not revoked does not
// work, the spend row of one request, a preview of an invitation that reveals nothing of one not
// meant for the caller (and writes nothing), the key's name in the spend CSV; and no invitation
// token ever turns into a session. Also: `me` names the roles whose keys work, and the sign-in page
// says a session ended and keeps the page to return to, escaped, never another site.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError, waitFor,
} from '../fixtures/gateway.mjs';
import { request, linkToken, consoleSession } from '../fixtures/console.mjs';

describe('console API of issue 33', () => {
  let mock;
  let store;
  let gw;
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));

  /** A signed-in session of `email` (the user is added when new). */
  const signedIn = async (email) => consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));

  /** One CSV line's fields, split at every comma: right but for a key name holding one. */
  const fields = (line) => line.split(',').map((f) => f.replace(/^"|"$/g, ''));

  before(async () => {
    mock = await startMock();
    store = await ENGINES[0].start();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
    config.storage = store.storage;
    config.console = { owner_email: 'founder@api33.test' };
    gw = await startGateway({ config, env: store.env });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
    store?.stop();
  });

  test('a key that is not revoked but does not work is inactive, with why; active again once its creator may create keys', async () => {
    await ok('teams', 'create', 'keyed');
    const owner = await signedIn('owner@keyed.test');
    const maker = await signedIn('maker@keyed.test');
    await ok('members', 'add', 'keyed', 'owner@keyed.test', '--role', 'owner');
    await ok('members', 'add', 'keyed', 'maker@keyed.test', '--role', 'member');
    await ok('keys', 'create', '--team', 'keyed', '--name', 'operators');
    const team = await owner.teamId('keyed');
    const made = await maker.call('POST', `/console/api/teams/${team}/keys`, { name: 'makers' });
    assert.equal(made.status, 201, made.text);
    const states = async () => {
      const r = await owner.call('GET', `/console/api/teams/${team}/keys`);
      assert.equal(r.status, 200, r.text);
      return Object.fromEntries(r.json.map((k) => [k.name, [k.state, k.inactive_reason]]));
    };
    assert.deepEqual(await states(), { operators: ['active', null], makers: ['active', null] });

    const makerId = maker.me.user.id;
    const demoted = await owner.call('PATCH', `/console/api/teams/${team}/members/${makerId}`, { role: 'viewer' });
    assert.equal(demoted.status, 200, demoted.text);
    assert.deepEqual(await states(), { operators: ['active', null], makers: ['inactive', 'creator_role'] });
    await ok('members', 'role', 'keyed', 'maker@keyed.test', 'member');
    assert.deepEqual(await states(), { operators: ['active', null], makers: ['active', null] });

    const removed = await owner.call('DELETE', `/console/api/teams/${team}/members/${makerId}`);
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(await states(), { operators: ['active', null], makers: ['inactive', 'creator_not_member'] });
    await ok('members', 'add', 'keyed', 'maker@keyed.test', '--role', 'admin');
    assert.deepEqual(await states(), { operators: ['active', null], makers: ['active', null] });
    const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'),
      { headers: { authorization: `Bearer ${made.json.secret}` } });
    assert.notEqual(r.status, 401, 'the key works again');

    const revoked = await owner.call('DELETE', `/console/api/teams/${team}/keys/${made.json.key.public_id}`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.deepEqual((await states()).makers, ['revoked', null]);
  });

  test('the spend listing takes a request_id; the CSV ends with the key\'s name', async () => {
    await ok('teams', 'create', 'billed', '--balance', '1');
    const owner = await signedIn('owner@billed.test');
    await ok('members', 'add', 'billed', 'owner@billed.test', '--role', 'owner');
    const team = await owner.teamId('billed');
    const made = await owner.call('POST', `/console/api/teams/${team}/keys`, { name: 'nightly, "batch"' });
    assert.equal(made.status, 201, made.text);
    const ids = [];
    for (const word of ['one', 'two', 'three']) {
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(word),
        { headers: { authorization: `Bearer ${made.json.secret}` } });
      assert.equal(r.status, 200, r.text);
      ids.push(r.headers.get('x-request-id'));
    }
    const T = `/console/api/teams/${team}`;
    await waitFor(async () => (await owner.call('GET', `${T}/spend`)).json.data.length === 3);
    const one = await owner.call('GET', `${T}/spend?request_id=${encodeURIComponent(ids[1])}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.json.data.map((row) => row.request_id), [ids[1]]);
    assert.equal(one.json.next_cursor, null);
    const none = await owner.call('GET', `${T}/spend?request_id=no-such-request`);
    assert.deepEqual(none.json.data, []);
    for (const bad of ['', 'x'.repeat(129), 'a%20b', 'a%0Ab', '%C3%A9']) {
      assertError(await owner.call('GET', `${T}/spend?request_id=${bad}`),
        { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'request_id' });
    }

    const csv = await owner.call('GET', `${T}/spend.csv?request_id=${encodeURIComponent(ids[2])}`);
    assert.equal(csv.status, 200, csv.text);
    const lines = csv.text.trim().split('\n');
    assert.equal(lines.length, 2, csv.text);
    // key_name, then the token kinds (columns are only added at the end).
    assert.deepEqual(fields(lines[0]).slice(-7), ['key_name', 'cached_tokens', 'cache_write_tokens',
      'cache_write_1h_tokens', 'audio_prompt_tokens', 'reasoning_tokens', 'audio_completion_tokens']);
    assert.ok(lines[1].endsWith(',"nightly, ""batch""",0,0,0,0,0,0'), lines[1]);
    const all = (await owner.call('GET', `${T}/spend.csv`)).text.trim().split('\n');
    assert.equal(all.length, 4);
    const header = fields(all[0]);
    const row = fields(all[1]);
    // The exact amount stays beside it.
    assert.match(row[header.indexOf('cost')], /^0\.\d+$/);
  });

  test('a preview shows an invitation meant for the caller, and nothing of any other; it writes nothing', async () => {
    await ok('teams', 'create', 'guild');
    const owner = await signedIn('owner@guild.test');
    await ok('members', 'add', 'guild', 'owner@guild.test', '--role', 'owner');
    const guest = await signedIn('guest@guild.test');
    const team = await owner.teamId('guild');
    const invite = async (body) => {
      const r = await owner.call('POST', `/console/api/teams/${team}/invitations`, body);
      assert.equal(r.status, 201, r.text);
      return r.json;
    };
    const preview = (token, s = guest, opts) => s.call('POST', '/console/api/invitations/preview', { token }, opts);
    const notFound = async (token) => assertError(await preview(token), { status: 404, code: 'resource_not_found' });

    const open = await invite({ role: 'member' });
    const mine = await invite({ role: 'viewer', email: 'guest@guild.test' });
    const before = store.sql('SELECT * FROM invites ORDER BY id; SELECT COUNT(*) FROM audit_log;');
    const shown = await preview(open.token);
    assert.equal(shown.status, 200, shown.text);
    assert.deepEqual(shown.json, { team: 'guild', role: 'member', invited_by: 'owner@guild.test' });
    assert.deepEqual((await preview(mine.token)).json, { team: 'guild', role: 'viewer', invited_by: 'owner@guild.test' });
    assert.equal(store.sql('SELECT * FROM invites ORDER BY id; SELECT COUNT(*) FROM audit_log;'), before, 'a preview writes nothing');
    // A change's checks: the console's Origin and the CSRF token.
    assertError(await preview(open.token, guest, { csrf: false }), { status: 403, code: 'csrf_failed' });
    assertError(await preview(open.token, guest, { origin: 'https://evil.example' }), { status: 403, code: 'csrf_failed' });

    const operators = (await ok('invites', 'create', 'guild', '--role', 'member')).stdout.trim();
    assert.deepEqual((await preview(operators)).json, { team: 'guild', role: 'member', invited_by: 'operator' });

    // Another user's, used, revoked, expired, unknown or malformed: all alike.
    const theirs = await invite({ role: 'member', email: 'someone@guild.test' });
    await notFound(theirs.token);
    const used = await invite({ role: 'member' });
    const other = await signedIn('other@guild.test');
    assert.equal((await other.call('POST', '/console/api/invitations/accept', { token: used.token })).status, 200);
    await notFound(used.token);
    const revoked = await invite({ role: 'member' });
    assert.equal((await owner.call('DELETE', `/console/api/teams/${team}/invitations/${revoked.invitation.id}`)).status, 200);
    await notFound(revoked.token);
    const expired = await invite({ role: 'member', valid_hours: 1 });
    store.sql(`UPDATE invites SET expires_at = 1 WHERE id = '${expired.invitation.id}'`);
    await notFound(expired.token);
    await notFound(`inv-tollgate-${'x'.repeat(open.token.length - 'inv-tollgate-'.length)}`);
    await notFound('not-a-token');
  });

  test('no console route turns an invitation token into a session: signed out is 401 and sets no cookie', async () => {
    await ok('teams', 'create', 'lobby');
    const token = (await ok('invites', 'create', 'lobby', '--role', 'member')).stdout.trim();
    for (const call of ['preview', 'accept']) {
      const r = await request(gw.baseURL, 'POST', `/console/api/invitations/${call}`,
        { headers: { origin: gw.baseURL }, body: { token } });
      assertError(r, { status: 401, code: 'not_signed_in' });
      assert.deepEqual(r.setCookies, [], `${call} sets no cookie`);
    }
    for (const page of [`/console/invite?token=${token}`, `/console/signin?token=${token}`]) {
      const r = await request(gw.baseURL, 'GET', page);
      assert.deepEqual(r.setCookies, [], `${page} sets no cookie`);
    }
    const link = await request(gw.baseURL, 'POST', '/console/api/auth/link', { headers: { origin: gw.baseURL }, body: { token } });
    assertError(link, { status: 401, code: 'sign_in_failed' });
    assert.deepEqual(link.setCookies, []);
  });

  test('me names the roles whose keys work', async () => {
    const s = await signedIn('founder@api33.test');
    assert.deepEqual(s.me.key_roles, ['owner', 'admin', 'member']);
  });

  test('the sign-in page: a session that ended, the page to return to (escaped; another site is dropped), an invitation', async () => {
    const page = async (query) => {
      const r = await request(gw.baseURL, 'GET', `/console/signin${query}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.setCookies, []);
      return r.text;
    };
    const plain = await page('');
    assert.match(plain, /<h1>Tollgate<\/h1>/);
    assert.match(plain, /You are not signed in/);
    const ended = await page('?ended=1&return_to=%2Fconsole%2Fusage');
    assert.match(ended, /<h1>Your session ended<\/h1>/);
    assert.match(ended, /Sign in with a sign-in link from your operator/);
    assert.doesNotMatch(ended, /You are not signed in/);
    // Without an identity provider no link carries the path; a hostile one is never written raw.
    const hostile = await page(`?ended=1&return_to=${encodeURIComponent('/console/"><script>x</script>')}`);
    assert.doesNotMatch(hostile, /<script>/);
    const invited = await page('?return_to=%2Fconsole%2Finvite');
    assert.match(invited, /An invitation does not sign you in/);
    assert.match(invited, /Sign in with a sign-in link from your operator/);
  });
});
