// API keys, teams and the store, end to end through HTTP and `tollgate admin`, on every engine
// (SQLite, and PostgreSQL in a private cluster): each 401 and 403 cause, revocation seen on the
// next request by every gateway on the store, suspension and membership, the admin surface and
// its errors, crash safety, hostile input, and that no secret leaks into any output.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, runTollgate, postJson, getJson, chatBody,
  assertError, assertCompletion, rawConnect, waitFor,
} from '../fixtures/gateway.mjs';

const KEY_RE = /^sk-tollgate-[0-9A-Za-z]{12}-[0-9A-Za-z]{32}$/;
const bearer = (key) => ({ authorization: `Bearer ${key}` });

for (const engine of ENGINES) {
  describe(`API keys and teams on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let config;
    let gw;
    let firstKey;
    const outputs = []; // Every text the gateways and the CLI printed, for the leak check.
    const secrets = new Map(); // secret -> the one line allowed to show it

    const admin = async (...args) => {
      const r = await runTollgate(['admin', '--config', gw.configPath, ...args], { env: store.env, timeoutMs: 20_000 });
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const ok = async (...args) => {
      const r = await admin(...args);
      assert.equal(r.code, 0, `admin ${args.join(' ')} failed: ${r.stderr}`);
      return r;
    };
    const userError = async (pattern, ...args) => {
      const r = await admin(...args);
      assert.equal(r.code, 1, `admin ${args.join(' ')} should fail; stdout ${r.stdout}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
      assert.match(lines[0], pattern);
      return r;
    };
    const newKey = async (team, name, ...extra) => {
      const r = await ok('keys', 'create', '--team', team, '--name', name, ...extra);
      const line = r.stdout.trim();
      assert.match(line, KEY_RE);
      secrets.set(line, line);
      return line;
    };
    const models = (gateway, key) => getJson(gateway.baseURL, '/v1/models', { headers: key ? bearer(key) : {} });

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } }));
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
      const m = gw.stdout.match(/^export TOLLGATE_API_KEY=(\S+)$/m);
      assert.ok(m, `the first start prints a key: ${gw.stdout}`);
      firstKey = m[1];
      assert.match(firstKey, KEY_RE);
      secrets.set(firstKey, `export TOLLGATE_API_KEY=${firstKey}`);
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('the first key works, streamed and not', async () => {
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'echo'), { headers: bearer(firstKey) });
      assertCompletion(r, { model: 'echo' });
      const s = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { stream: true }, 'echo'), { headers: bearer(firstKey) });
      assert.equal(s.status, 200);
      assert.match(s.text, /data: \[DONE\]/);
      assert.equal((await models(gw, firstKey)).status, 200);
    });

    test('/health and /ready need no key; an unknown path is 404 before any key check', async () => {
      assert.equal((await getJson(gw.baseURL, '/health')).status, 200);
      assert.equal((await getJson(gw.baseURL, '/ready')).status, 200);
      assertError(await getJson(gw.baseURL, '/v1/nothing'), { status: 404, code: 'not_found' });
    });

    test('every cause of a 401 has its code, the Bearer challenge, and no echo of the key', async () => {
      const good = firstKey;
      const other = `sk-tollgate-${'A'.repeat(12)}-${'b'.repeat(32)}`;
      const cases = [
        [undefined, 'missing_api_key'],
        ['', 'missing_api_key'],
        [`Basic ${Buffer.from('u:p').toString('base64')}`, 'invalid_authorization_scheme'],
        [good, 'invalid_authorization_scheme'],
        ['Bearer', 'invalid_authorization_scheme'],
        ['Bearer sk-proj-0123456789', 'malformed_api_key'],
        [`Bearer ${good.slice(0, -1)}`, 'malformed_api_key'],
        [`Bearer ${good}x`, 'malformed_api_key'],
        [`Bearer ${other}`, 'invalid_api_key'],
        [`Bearer ${good.slice(0, -4)}abcd`, 'invalid_api_key'],
      ];
      for (const [header, code] of cases) {
        const headers = header === undefined ? {} : { authorization: header };
        for (const r of [
          await getJson(gw.baseURL, '/v1/models', { headers }),
          await postJson(gw.baseURL, '/v1/chat/completions', chatBody('x', {}, 'echo'), { headers }),
        ]) {
          assertError(r, { status: 401, type: 'authentication_error', code });
          assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="tollgate"');
          assert.ok(!r.text.includes(good.slice(12)), `the key is echoed: ${r.text}`);
        }
      }
    });

    test('a key revoked while the gateway runs is refused on the very next request', async () => {
      const key = await newKey('default', 'short-lived');
      assert.equal((await models(gw, key)).status, 200);
      await ok('keys', 'revoke', key.split('-')[2]);
      assertError(await models(gw, key), { status: 401, type: 'authentication_error', code: 'revoked_api_key' });
      await userError(/already revoked/, 'keys', 'revoke', key);
      // The whole key is accepted by revoke too.
      const again = await newKey('default', 'short-lived');
      await ok('keys', 'revoke', again);
      assertError(await models(gw, again), { status: 401, code: 'revoked_api_key' });
    });

    test('two gateways on one store both refuse a revoked key on the next request', async () => {
      const second = await startGateway({ config, env: store.env });
      try {
        assert.doesNotMatch(second.stdout, /TOLLGATE_API_KEY=/, 'a later start prints no key');
        assert.match(second.stdout, /keys create/);
        const key = await newKey('default', 'shared');
        assert.equal((await models(gw, key)).status, 200);
        assert.equal((await models(second, key)).status, 200);
        await ok('keys', 'revoke', key);
        assertError(await models(gw, key), { status: 401, code: 'revoked_api_key' });
        assertError(await models(second, key), { status: 401, code: 'revoked_api_key' });
      } finally {
        outputs.push(second.stdout, second.stderr);
        await second.stop();
      }
    });

    test('a suspended team gets 403 until it is resumed', async () => {
      await ok('teams', 'create', 'suspendable');
      const key = await newKey('suspendable', 'k');
      assert.equal((await models(gw, key)).status, 200);
      await ok('teams', 'suspend', 'suspendable');
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('x', {}, 'echo'), { headers: bearer(key) });
      assertError(r, { status: 403, type: 'permission_error', code: 'team_suspended' });
      assert.equal(JSON.parse((await ok('teams', 'show', 'suspendable', '--json')).stdout).state, 'suspended');
      await ok('teams', 'resume', 'suspendable');
      assert.equal((await models(gw, key)).status, 200);
    });

    test('a key works while its creator is a member whose role may create keys', async () => {
      await ok('teams', 'create', 'crew');
      await ok('users', 'add', 'lead@example.com', '--name', 'Lead');
      await ok('users', 'add', 'Dev@Example.com');
      await ok('members', 'add', 'crew', 'lead@example.com', '--role', 'owner');
      await ok('members', 'add', 'crew', 'dev@example.com', '--role', 'member');
      const key = await newKey('crew', 'dev key', '--user', 'DEV@example.com');
      assert.equal((await models(gw, key)).status, 200);
      await ok('members', 'remove', 'crew', 'dev@example.com');
      assertError(await models(gw, key), { status: 403, type: 'permission_error', code: 'not_a_member' });
      // Back as a viewer, a role that may not create keys: the key stays refused.
      await ok('members', 'add', 'crew', 'dev@example.com', '--role', 'viewer');
      assertError(await models(gw, key), { status: 403, type: 'permission_error', code: 'not_a_member' });
      await ok('members', 'role', 'crew', 'dev@example.com', 'member');
      assert.equal((await models(gw, key)).status, 200);
      // A demotion reaches the running gateway as a revocation does, and a promotion too.
      await ok('members', 'role', 'crew', 'dev@example.com', 'viewer');
      assertError(await models(gw, key), { status: 403, type: 'permission_error', code: 'not_a_member' });
      await ok('members', 'role', 'crew', 'dev@example.com', 'admin');
      assert.equal((await models(gw, key)).status, 200);
    });

    test('the admin surface: teams, users, members, invitations and keys, with --json', async () => {
      await ok('teams', 'create', 'acme');
      await userError(/already exists/, 'teams', 'create', 'acme');
      await userError(/no team named "ghost"/, 'teams', 'show', 'ghost');
      const teams = JSON.parse((await ok('teams', 'list', '--json')).stdout);
      const acme = teams.find((t) => t.name === 'acme');
      assert.deepEqual(Object.keys(acme).sort(), ['created_at', 'id', 'name', 'state']);
      assert.equal(acme.state, 'active');
      assert.match(acme.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const shown = JSON.parse((await ok('teams', 'show', 'acme', '--json')).stdout);
      assert.deepEqual(shown, { ...acme, members: 0, active_keys: 0, balance: 0, reserved: 0 });

      await ok('users', 'add', 'ann@acme.io', '--name', 'Ann');
      await userError(/already exists/, 'users', 'add', 'ANN@acme.io');
      await userError(/not an email/, 'users', 'add', 'not-an-email');
      await ok('users', 'add', 'bo@acme.io');
      await ok('members', 'add', 'acme', 'ann@acme.io', '--role', 'owner');
      await userError(/unknown role "boss"/, 'members', 'add', 'acme', 'bo@acme.io', '--role', 'boss');
      await userError(/no user/, 'members', 'add', 'acme', 'nobody@acme.io', '--role', 'member');
      await ok('members', 'add', 'acme', 'bo@acme.io', '--role', 'member');
      await userError(/already a member/, 'members', 'add', 'acme', 'bo@acme.io', '--role', 'admin');
      await ok('members', 'role', 'acme', 'bo@acme.io', 'admin');
      await userError(/last owner/, 'members', 'role', 'acme', 'ann@acme.io', 'admin');
      await userError(/last owner/, 'members', 'remove', 'acme', 'ann@acme.io');
      const members = JSON.parse((await ok('members', 'list', 'acme', '--json')).stdout);
      assert.deepEqual(members.map((m) => [m.email, m.name, m.role]), [['ann@acme.io', 'Ann', 'owner'], ['bo@acme.io', '', 'admin']]);
      assert.deepEqual(Object.keys(members[0]).sort(), ['email', 'joined_at', 'name', 'role', 'user_id']);

      // Invitations: the token is shown once, on a line of its own; single use; bound to an email.
      const inv = await ok('invites', 'create', 'acme', '--role', 'viewer', '--email', 'cy@acme.io', '--expires', '2d');
      const token = inv.stdout.trim();
      assert.match(token, /^inv-tollgate-[0-9A-Za-z]{32}$/);
      secrets.set(token, token);
      await userError(/--expires/, 'invites', 'create', 'acme', '--role', 'viewer', '--expires', 'soon');
      let invites = JSON.parse((await ok('invites', 'list', 'acme', '--json')).stdout);
      assert.equal(invites.length, 1);
      assert.deepEqual(Object.keys(invites[0]).sort(), ['accepted_by', 'created_at', 'email', 'expires_at', 'id', 'role', 'state']);
      assert.equal(invites[0].state, 'pending');
      await userError(/another email/, 'invites', 'accept', token, '--email', 'eve@acme.io');
      await userError(/not an invitation/, 'invites', 'accept', 'inv-tollgate-short', '--email', 'cy@acme.io');
      await ok('invites', 'accept', token, '--email', 'cy@acme.io');
      await userError(/already used/, 'invites', 'accept', token, '--email', 'cy@acme.io');
      invites = JSON.parse((await ok('invites', 'list', 'acme', '--json')).stdout);
      assert.equal(invites[0].state, 'accepted');
      assert.equal(invites[0].accepted_by, 'cy@acme.io');
      const revocable = (await ok('invites', 'create', 'acme', '--role', 'member')).stdout.trim();
      secrets.set(revocable, revocable);
      const id = JSON.parse((await ok('invites', 'list', 'acme', '--json')).stdout).find((i) => i.state === 'pending').id;
      await ok('invites', 'revoke', id);
      await userError(/revoked/, 'invites', 'accept', revocable, '--email', 'dee@acme.io');

      // Keys: listed with everything but the secret.
      const key = await newKey('acme', 'ci', '--user', 'bo@acme.io');
      await userError(/already has an active key named "ci"/, 'keys', 'create', '--team', 'acme', '--name', 'ci');
      await userError(/not a member/, 'keys', 'create', '--team', 'acme', '--name', 'x', '--user', 'lead@example.com');
      assert.equal((await postJson(gw.baseURL, '/v1/chat/completions', chatBody('x', {}, 'echo'), { headers: bearer(key) })).status, 200);
      const keys = JSON.parse((await ok('keys', 'list', '--team', 'acme', '--json')).stdout);
      assert.equal(keys.length, 1);
      assert.deepEqual(Object.keys(keys[0]).sort(), ['allowed_models', 'created_at', 'created_by', 'expires_at', 'inactive_reason', 'last_used_at', 'name', 'public_id', 'revoked_at', 'state', 'team']);
      assert.equal(keys[0].public_id, key.split('-')[2]);
      assert.equal(keys[0].created_by, 'bo@acme.io');
      assert.equal(keys[0].state, 'active');
      const all = await ok('keys', 'list');
      assert.ok(!all.stdout.includes(key.split('-')[3]), 'keys list never shows a secret');
      // last_used_at is written back within a few seconds, without a write per request.
      let used = null;
      for (let i = 0; i < 40 && !used; ++i) {
        await new Promise((r) => setTimeout(r, 200));
        used = JSON.parse((await ok('keys', 'list', '--team', 'acme', '--json')).stdout)[0].last_used_at;
      }
      assert.match(String(used), /^\d{4}-/);
      await userError(/no key/, 'keys', 'revoke', 'AAAAAAAAAAAA');
      await userError(/not a key's public id/, 'keys', 'revoke', 'x;DROP');
      const usage = await admin('keys', 'frobnicate');
      assert.equal(usage.code, 2);
    });

    test('200 keys created concurrently are all distinct and all work', async () => {
      await ok('teams', 'create', 'many');
      const keys = [];
      const batch = 8;
      for (let i = 0; i < 200; i += batch) {
        const made = await Promise.all(Array.from({ length: Math.min(batch, 200 - i) }, (_, j) => newKey('many', `k${i + j}`)));
        keys.push(...made);
      }
      assert.equal(new Set(keys).size, 200);
      assert.equal(new Set(keys.map((k) => k.split('-')[2])).size, 200);
      for (let i = 0; i < keys.length; i += 20) {
        const statuses = await Promise.all(keys.slice(i, i + 20).map(async (k) => (await models(gw, k)).status));
        assert.deepEqual(statuses, Array(statuses.length).fill(200));
      }
    });

    test('hostile input: odd Authorization headers, control characters, long names, SQL', async () => {
      // Several spaces and a lower-case scheme are allowed (RFC 9110 §11.1, §11.4).
      assert.equal((await models(gw, null)).status, 401);
      assert.equal((await getJson(gw.baseURL, '/v1/models', { headers: { authorization: `bearer    ${firstKey}` } })).status, 200);
      assertError(await getJson(gw.baseURL, '/v1/models', { headers: { authorization: `Bearer ${'x'.repeat(12000)}` } }), { status: 401, code: 'malformed_api_key' });
      // Non-ASCII bytes, sent raw.
      const c = await rawConnect(gw.port);
      try {
        await c.write(Buffer.concat([
          Buffer.from('GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-tollgate-'),
          Buffer.from([0xc3, 0xa9, 0xff, 0xfe]),
          Buffer.from('\r\n\r\n'),
        ]));
        const r = await c.read(3000);
        assert.equal(r?.status, 401);
      } finally {
        c.close();
      }
      await userError(/control characters/, 'teams', 'create', 'bad\u0007name');
      await userError(/control characters/, 'teams', 'create', 'new\nline');
      await userError(/at most 100 characters/, 'teams', 'create', 'x'.repeat(101));
      await ok('teams', 'create', 'é'.repeat(100));
      await userError(/empty/, 'teams', 'create', '   ');
      const sql = `Robert'); DROP TABLE teams;-- "$1" ?1 %s \\`;
      await ok('teams', 'create', sql);
      const key = await newKey(sql, `${sql} key`);
      const listed = JSON.parse((await ok('keys', 'list', '--team', sql, '--json')).stdout);
      assert.equal(listed[0].team, sql);
      assert.equal(listed[0].name, `${sql} key`);
      assert.equal((await models(gw, key)).status, 200);
      assert.ok(JSON.parse((await ok('teams', 'list', '--json')).stdout).some((t) => t.name === sql));
      await ok('users', 'add', "o'brien+x@acme.io", '--name', sql);
      await ok('members', 'add', sql, "o'brien+x@acme.io", '--role', 'admin');
      const ms = JSON.parse((await ok('members', 'list', sql, '--json')).stdout);
      assert.deepEqual(ms.map((m) => [m.email, m.name, m.role]), [["o'brien+x@acme.io", sql, 'admin']]);
      await userError(/control characters/, 'users', 'add', 'esc@acme.io', '--name', 'a\u001bb');
      await userError(/at most 100 characters/, 'keys', 'create', '--team', sql, '--name', 'k'.repeat(101));
    });

    test('a gateway killed with SIGKILL and restarted finds its keys, teams and members', async () => {
      const key = await newKey('crew', 'survivor', '--user', 'lead@example.com');
      outputs.push(gw.stdout, gw.stderr);
      await gw.kill();
      gw = await startGateway({ config, env: store.env });
      assert.equal((await models(gw, key)).status, 200);
      assert.equal((await models(gw, firstKey)).status, 200);
      const members = JSON.parse((await ok('members', 'list', 'crew', '--json')).stdout);
      assert.ok(members.some((m) => m.email === 'lead@example.com' && m.role === 'owner'));
    });

    test('tollgate migrate reports the schema; a gateway and admin refuse a newer one', async () => {
      const m = await runTollgate(['migrate', '--config', gw.configPath], { env: store.env });
      assert.equal(m.code, 0, m.stderr);
      assert.match(m.stdout, /^schema at version (\d+) \(was \1\)$/m);
      store.sql("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999999, 'from the future', 0)");
      try {
        const r = await runTollgate(['serve', '--config', gw.configPath], { env: store.env });
        assert.equal(r.code, 1, r.stdout);
        assert.match(r.stderr, /newer than this tollgate knows/);
        const a = await admin('teams', 'list');
        assert.equal(a.code, 1);
        assert.match(a.stderr, /newer than this tollgate knows/);
      } finally {
        store.sql('DELETE FROM schema_migrations WHERE version = 999999');
      }
      assert.equal((await models(gw, firstKey)).status, 200);
    });

    // A database server can go away; a SQLite file cannot. Cut off from it, the gateway cannot
    // tell whether a key was revoked: it is fenced once its lease (2 s by default) has run out.
    if (engine.name === 'postgres') test('cut off from the store, the gateway is fenced past its lease, and follows again after', async () => {
      const key = await newKey('default', 'through an outage');
      assert.equal((await models(gw, key)).status, 200);
      const cutAt = Date.now();
      store.halt();
      try {
        const ready = await waitFor(async () => {
          const r = await getJson(gw.baseURL, '/ready');
          return r.status === 503 ? r : null;
        }, 10_000, 50);
        assert.ok(Date.now() - cutAt < 5_000, 'fenced within its lease and a heartbeat of the cut');
        assertError(ready, { status: 503, code: 'gateway_fenced' });
        for (const k of [key, 'sk-tollgate-AAAAAAAAAAAA-' + 'b'.repeat(32)]) {
          const r = await models(gw, k);
          assertError(r, { status: 503, type: 'api_error', code: 'gateway_fenced' });
          assert.equal(r.headers.get('retry-after'), '1');
        }
      } finally {
        store.restart();
      }
      // Once the store is back (the follower retries within a quarter of its lease), it serves
      // again, and revocation reaches it.
      await waitFor(async () => (await getJson(gw.baseURL, '/ready')).status === 200, 15_000, 50);
      assert.equal((await models(gw, key)).status, 200);
      const r = await ok('keys', 'revoke', key);
      assert.doesNotMatch(r.stderr, /warning: gateway/, 'the gateway confirmed the revocation');
      assertError(await models(gw, key), { status: 401, code: 'revoked_api_key' });
      assert.match(gw.stderr, /following the store failed \(will retry\)/);
    });

    test('no key, secret or token is printed anywhere but the one line that shows it', async () => {
      outputs.push(gw.stdout, gw.stderr);
      const text = outputs.join('\n');
      for (const [secret, allowedLine] of secrets) {
        const tail = secret.slice(-32);
        const lines = text.split('\n').filter((l) => l.includes(tail));
        assert.ok(lines.length >= 1, 'the secret was printed once');
        for (const l of lines) assert.equal(l.trim(), allowedLine, `a secret leaked in: ${l}`);
      }
    });
  });
}

describe('open mode (the prod gateway)', () => {
  test('the Authorization header is accepted and ignored', async () => {
    const mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const gw = await startGateway({ config: standardConfig(mock.url, dead, { gateway: { auth: 'open' } }) });
    try {
      assert.doesNotMatch(gw.stdout, /TOLLGATE_API_KEY/, 'open mode makes no key');
      for (const headers of [{}, { authorization: 'Bearer nonsense' }, { authorization: 'Basic x' }]) {
        assertCompletion(await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'echo'), { headers }), { model: 'echo' });
      }
    } finally {
      await gw.stop();
      await mock.close();
    }
  });
});
