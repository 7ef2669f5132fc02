// Keys that carry their own rules, end to end on every engine: an expiry (401 key_expired once
// past it), allowed models (403 model_not_allowed with nothing sent upstream and no cached answer
// of another model served; /v1/models filtered), set by `tollgate admin keys create|update` and
// the console's API, where a member sets them only when making a key and owners and admins
// change them later (audited with the rules before and after; null clears a rule); a change is
// seen by every gateway on the store once it returns.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, postJson, getJson, chatBody,
  assertError, marker, waitFor,
} from '../fixtures/gateway.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const publicId = (key) => key.split('-')[2];
const inSeconds = (s) => new Date(Date.now() + s * 1000).toISOString();
const ON = { 'tollgate::cache_options': { enabled: 'on' } };

for (const engine of ENGINES) {
  describe(`keys' own rules on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;
    const { admin, ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const newKey = async (team, name, ...rules) =>
      (await ok('keys', 'create', '--team', team, '--name', name, ...rules)).stdout.trim();
    const listed = async (team) => JSON.parse((await ok('keys', 'list', '--team', team, '--json')).stdout);
    const chat = (key, model, content = marker('rules'), extra = {}) =>
      postJson(gw.baseURL, '/v1/chat/completions', chatBody(content, extra, model), { headers: bearer(key) });
    const signedIn = async (email) =>
      consoleSession(gw).signIn(linkToken((await ok('login-link', email)).stdout));
    /** Requests the mock received whose body holds `m`. */
    const upstreamCalls = (m) => mock.requests.filter((r) => r.rawBody.includes(m)).length;

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } }));
      config.functions = { pair: { variants: { v: { model: 'plain_model', weight: 1 } } } };
      config.console = { owner_email: 'owner@rules.test' };
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
      await ok('teams', 'create', 'rules', '--balance', '10');
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('a key past its expiry is refused with 401 key_expired; before it, it works', async () => {
      const key = await newKey('rules', 'short-lived', '--expires-at', inSeconds(2));
      const first = await chat(key, 'echo');
      assert.equal(first.status, 200, first.text);
      const refused = await waitFor(async () => {
        const r = await chat(key, 'echo');
        return r.status === 401 ? r : null;
      }, 6000, 100);
      assertError(refused, { status: 401, type: 'authentication_error', code: 'key_expired' });
      const [shown] = (await listed('rules')).filter((k) => k.public_id === publicId(key));
      assert.equal(shown.state, 'inactive');
      assert.equal(shown.inactive_reason, 'expired');
    });

    test('a model the key does not allow is 403 model_not_allowed, nothing sent upstream, no cached answer served', async () => {
      const any = await newKey('rules', 'any-model');
      const narrow = await newKey('rules', 'narrow', '--allowed-models', 'mock_model,tollgate::function_name::pair');
      const m = marker('cached');
      const cached = await chat(any, 'plain_model', m, ON);
      assert.equal(cached.status, 200, cached.text);
      assert.equal(upstreamCalls(m), 1);
      const refused = await chat(narrow, 'plain_model', m, ON);
      assertError(refused, { status: 403, type: 'permission_error', code: 'model_not_allowed', param: 'model' });
      assert.equal(refused.headers.get('tollgate-cache'), null);
      const fresh = marker('never-sent');
      assertError(await chat(narrow, 'double_model', fresh), { status: 403, code: 'model_not_allowed' });
      assert.equal(upstreamCalls(fresh), 0);
      // The allowed model, in its prefixed form too, and the function (whose variant uses another model).
      assert.equal((await chat(narrow, 'mock_model')).status, 200);
      assert.equal((await chat(narrow, 'tollgate::model_name::mock_model')).status, 200);
      assert.equal((await chat(narrow, 'tollgate::function_name::pair')).status, 200);
    });

    test('/v1/models lists only the allowed models; another is 404', async () => {
      const narrow = await newKey('rules', 'catalogue', '--allowed-models', 'mock_model,echo');
      const list = await getJson(gw.baseURL, '/v1/models', { headers: bearer(narrow) });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.json.data.map((m) => m.id).sort(), ['echo', 'mock_model']);
      assert.equal((await getJson(gw.baseURL, '/v1/models/mock_model', { headers: bearer(narrow) })).status, 200);
      assertError(await getJson(gw.baseURL, '/v1/models/plain_model', { headers: bearer(narrow) }),
        { status: 404, code: 'model_not_found' });
      const any = await newKey('rules', 'catalogue-any');
      const all = await getJson(gw.baseURL, '/v1/models', { headers: bearer(any) });
      assert.ok(all.json.data.length > 2);
    });

    test('tollgate admin keys create and update set, change and clear the rules', async () => {
      const expires = inSeconds(3600);
      const key = await newKey('rules', 'admin-made', '--expires-at', expires, '--allowed-models', 'echo');
      let [k] = (await listed('rules')).filter((x) => x.public_id === publicId(key));
      assert.equal(Date.parse(k.expires_at), Math.floor(Date.parse(expires) / 1000) * 1000);
      assert.deepEqual(k.allowed_models, ['echo']);
      assertError(await chat(key, 'mock_model'), { status: 403, code: 'model_not_allowed' });
      await ok('keys', 'update', publicId(key), '--allowed-models', 'none');
      assert.equal((await chat(key, 'mock_model')).status, 200);
      await ok('keys', 'update', publicId(key), '--expires-at', 'none', '--allowed-models', 'mock_model');
      [k] = (await listed('rules')).filter((x) => x.public_id === publicId(key));
      assert.equal(k.expires_at, null);
      assert.deepEqual(k.allowed_models, ['mock_model']);
      assertError(await chat(key, 'echo'), { status: 403, code: 'model_not_allowed' });
      // Refusals: a past expiry, an unknown model, a date that is not one.
      for (const args of [['--expires-at', inSeconds(-60)], ['--allowed-models', 'no_such_model'], ['--expires-at', 'tomorrow']]) {
        const r = await admin('keys', 'update', publicId(key), ...args);
        assert.equal(r.code, 1, `${args}: ${r.stdout}`);
      }
      const bad = await admin('keys', 'create', '--team', 'rules', '--name', 'never', '--expires-at', inSeconds(-60));
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /future/);
    });

    test('a narrowed key is refused by every gateway on the store once the update returns', async () => {
      const second = await startGateway({ config, env: store.env });
      try {
        const key = await newKey('rules', 'shared', '--allowed-models', 'echo,mock_model');
        assert.equal((await chat(key, 'mock_model')).status, 200);
        await ok('keys', 'update', publicId(key), '--allowed-models', 'echo');
        for (const g of [gw, second]) {
          const r = await postJson(g.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'mock_model'), { headers: bearer(key) });
          assertError(r, { status: 403, code: 'model_not_allowed' });
        }
        await ok('keys', 'update', publicId(key), '--expires-at', inSeconds(1));
        const refused = await waitFor(async () => {
          const r = await postJson(second.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'echo'), { headers: bearer(key) });
          return r.status === 401 ? r : null;
        }, 5000, 100);
        assertError(refused, { status: 401, code: 'key_expired' });
      } finally {
        await second.stop();
      }
    });

    test('the console: a member sets rules on creation only; an owner changes them, audited; null clears', async () => {
      const owner = await signedIn('owner@rules.test');
      await ok('members', 'add', 'rules', 'owner@rules.test', '--role', 'owner');
      const member = await signedIn('member@rules.test');
      await ok('members', 'add', 'rules', 'member@rules.test', '--role', 'member');
      const team = await owner.teamId('rules');
      const T = `/console/api/teams/${team}`;
      const expires = inSeconds(7200);
      const made = await member.call('POST', `${T}/keys`, { name: 'contractor', expires_at: expires, allowed_models: ['echo', 'mock_model'] });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.json.key.allowed_models, ['echo', 'mock_model']);
      assert.equal(Date.parse(made.json.key.expires_at), Math.floor(Date.parse(expires) / 1000) * 1000);
      const key = made.json.secret;
      assertError(await chat(key, 'plain_model'), { status: 403, code: 'model_not_allowed' });
      const path = `${T}/keys/${made.json.key.public_id}`;
      assertError(await member.call('PATCH', path, { allowed_models: ['echo'] }), { status: 403, code: 'role_forbidden' });
      assertError(await member.call('POST', `${T}/keys`, { name: 'past', expires_at: inSeconds(-60) }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', path, { expires_at: inSeconds(-60) }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', path, { allowed_models: ['no_such_model'] }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', path, { expires_at: 'soon' }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', path, { allowed_models: 'echo' }), { status: 400, code: 'invalid_type' });

      const narrowed = await owner.call('PATCH', path, { allowed_models: ['echo'] });
      assert.equal(narrowed.status, 200, narrowed.text);
      assert.deepEqual(narrowed.json.key.allowed_models, ['echo']);
      assert.equal(narrowed.json.gateways_lagging, 0);
      assertError(await chat(key, 'mock_model'), { status: 403, code: 'model_not_allowed' });

      const cleared = await owner.call('PATCH', path, { expires_at: null, allowed_models: null });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal(cleared.json.key.expires_at, null);
      assert.equal(cleared.json.key.allowed_models, null);
      assert.equal((await chat(key, 'plain_model')).status, 200);

      const audit = await owner.call('GET', `${T}/audit`);
      const changes = audit.json.data.filter((e) => e.action === 'key.rules_changed' && e.target.startsWith(made.json.key.public_id));
      assert.equal(changes.length, 2, audit.text);
      // Newest first: the clearing, then the narrowing, each with the rules before and after.
      assert.match(changes[0].target, /before \{"expires_at":"[^"]+","allowed_models":\["echo"\]\} after \{"expires_at":null,"allowed_models":null\}$/);
      assert.match(changes[1].target, /before \{"expires_at":"[^"]+","allowed_models":\["echo","mock_model"\]\} after \{"expires_at":"[^"]+","allowed_models":\["echo"\]\}$/);
      assert.equal(changes[0].actor, 'owner@rules.test');
    });
  });
}
