// Rate limits, end to end on every engine: requests and tokens per calendar minute and requests in
// flight, per key, team and model, answered 429 with the limit's code and a Retry-After (none when
// the request alone is over the limit), OpenAI's x-ratelimit headers on every answer, nothing sent
// upstream for a refused request, and the limit held exactly by three gateways sharing one store.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, postJson, chatBody, assertError, marker, sleep,
} from '../fixtures/gateway.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const ON = { 'tollgate::cache_options': { enabled: 'on' } };
const MINUTE = 60_000;

/** Waits, when the current minute (UTC) has less than `needMs` left, for the next one to begin. */
async function freshWindow(needMs = 15_000) {
  const left = MINUTE - (Date.now() % MINUTE);
  if (left < needMs) await sleep(left + 50);
}

/**
 * Waits, unless the current minute (UTC) began at most `withinMs` ago, for the next one to begin:
 * then a burst starts just after a minute boundary.
 */
async function minuteStart(withinMs = 3_000) {
  const into = Date.now() % MINUTE;
  if (into > withinMs) await sleep(MINUTE - into + 50);
  return Date.now() % MINUTE;
}

for (const engine of ENGINES) {
  describe(`rate limits on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;
    const { admin: runAdmin, ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const newKey = async (team, name) =>
      (await ok('keys', 'create', '--team', team, '--name', name)).stdout.trim();
    const chat = (g, key, model, content = marker('limits'), extra = {}) =>
      postJson(g.baseURL, '/v1/chat/completions', chatBody(content, extra, model), { headers: bearer(key) });
    const upstreamCalls = (m) => mock.requests.filter((r) => r.rawBody.includes(m)).length;

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } }));
      config.limits = { key: { rpm: 5, tpm: 100_000, concurrent: 2 } };
      config.models.plain_model.limits = { rpm: 8 };
      config.storage = store.storage;
      config.console = { owner_email: 'operator@limits.test' };
      gw = await startGateway({ config, env: store.env });
      await ok('teams', 'create', 'limited', '--balance', '10');
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('a key gets its rpm in a minute, then 429 key_rpm_exceeded with Retry-After and nothing sent upstream', async () => {
      await freshWindow();
      const key = await newKey('limited', 'rpm');
      for (let i = 0; i < 5; i += 1) {
        const r = await chat(gw, key, 'echo');
        assert.equal(r.status, 200, r.text);
        assert.equal(r.headers.get('x-ratelimit-limit-requests'), '5');
        assert.equal(r.headers.get('x-ratelimit-remaining-requests'), String(4 - i));
        assert.match(r.headers.get('x-ratelimit-reset-requests'), /^([1-9]|[1-5][0-9]|60)s$|^1m0s$/);
        assert.equal(r.headers.get('x-ratelimit-limit-tokens'), '100000');
      }
      const m = marker('refused');
      const refused = await chat(gw, key, 'plain_model', m);
      assertError(refused, { status: 429, type: 'rate_limit_error', code: 'key_rpm_exceeded' });
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
      assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.equal(upstreamCalls(m), 0);
      // Another key of the same team has its own.
      const other = await newKey('limited', 'rpm-other');
      assert.equal((await chat(gw, other, 'echo')).status, 200);
    });

    test('a request whose bound alone is over the key tpm is refused without Retry-After, naming max_tokens', async () => {
      const key = await newKey('limited', 'tpm');
      const r = await chat(gw, key, 'echo', marker('big'), { max_tokens: 200_000 });
      assertError(r, { status: 429, type: 'rate_limit_error', code: 'key_tpm_exceeded', param: 'max_tokens' });
      assert.equal(r.headers.get('retry-after'), null);
      assert.match(JSON.parse(r.text).error.message, /max_tokens/);
    });

    test('a key has at most `concurrent` requests in flight: the next is 429 key_concurrency_exceeded, Retry-After 1', async () => {
      await freshWindow(20_000);
      const key = await newKey('limited', 'concurrent');
      const slow = [1, 2].map(() => chat(gw, key, 'mock_model', `${marker('slow')} mock:slow=1500`));
      await sleep(400);
      const refused = await chat(gw, key, 'echo');
      assertError(refused, { status: 429, type: 'rate_limit_error', code: 'key_concurrency_exceeded' });
      assert.equal(refused.headers.get('retry-after'), '1');
      for (const r of await Promise.all(slow)) assert.equal(r.status, 200, r.text);
      assert.equal((await chat(gw, key, 'echo')).status, 200);
    });

    test('a model limit counts only work that goes upstream: cache hits pass it', async () => {
      await freshWindow();
      const keys = await Promise.all([0, 1].map((i) => newKey('limited', `model-${i}`)));
      const m = marker('model');
      const first = await chat(gw, keys[0], 'plain_model', m, ON);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-ratelimit-limit-requests'), '5'); // The key's, tighter.
      // Three more hits on the cache: the model's count stays at one.
      for (let i = 0; i < 3; i += 1) {
        const hit = await chat(gw, keys[0], 'plain_model', m, ON);
        assert.equal(hit.headers.get('tollgate-cache'), 'hit');
      }
      let admitted = 1;
      let refused = null;
      for (let i = 0; i < 10 && !refused; i += 1) {
        const r = await chat(gw, keys[1], 'plain_model', marker('fresh'));
        if (r.status === 200) admitted += 1;
        else refused = r;
      }
      // The second key has 5 a minute; the model 8, of which one was used: key's limit first.
      assert.equal(admitted, 6);
      assertError(refused, { status: 429, type: 'rate_limit_error', code: 'key_rpm_exceeded' });
    });

    test("a key's and a team's own limits, set by the operator, take the place of the defaults", async () => {
      await freshWindow();
      const roomy = (await ok('keys', 'create', '--team', 'limited', '--name', 'roomy', '--rpm', '7')).stdout.trim();
      const shown = JSON.parse((await ok('keys', 'list', '--team', 'limited', '--json')).stdout)
        .find((k) => k.name === 'roomy');
      assert.deepEqual([shown.rpm, shown.tpm, shown.concurrent], [7, undefined, undefined]);
      const first = await chat(gw, roomy, 'echo');
      assert.equal(first.headers.get('x-ratelimit-limit-requests'), '7');
      assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '100000'); // [limits.key]'s.
      // Narrowed later: the next request sees the new limit.
      await ok('keys', 'update', roomy.split('-')[2], '--rpm', '2');
      const second = await chat(gw, roomy, 'echo');
      assert.equal(second.headers.get('x-ratelimit-limit-requests'), '2');
      assertError(await chat(gw, roomy, 'echo'), { status: 429, type: 'rate_limit_error', code: 'key_rpm_exceeded' });
      // `none` gives the default back.
      await ok('keys', 'update', roomy.split('-')[2], '--rpm', 'none');
      assert.equal((await chat(gw, roomy, 'echo')).headers.get('x-ratelimit-limit-requests'), '5');

      await ok('teams', 'create', 'small-team', '--balance', '1');
      await ok('teams', 'limits', 'small-team', '--rpm', '3');
      const team = JSON.parse((await ok('teams', 'show', 'small-team', '--json')).stdout);
      assert.equal(team.rpm, 3);
      const keys = await Promise.all([0, 1].map((i) => newKey('small-team', `t-${i}`)));
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await chat(gw, keys[i % 2], 'echo')).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const refused = await chat(gw, keys[1], 'echo');
      assertError(refused, { status: 429, type: 'rate_limit_error', code: 'team_rpm_exceeded' });
      const bad = await runAdmin('keys', 'update', roomy.split('-')[2], '--rpm', '0');
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /--rpm must be a whole number from 1/);
    });

    test('through the console an owner sets a key\'s limits at or below the operator\'s, never removes one', async () => {
      const owner = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'owner@limits.test')).stdout));
      await ok('members', 'add', 'limited', 'owner@limits.test', '--role', 'owner');
      const T = `/console/api/teams/${await owner.teamId('limited')}`;
      assertError(await owner.call('POST', `${T}/keys`, { name: 'greedy', rpm: 6 }), { status: 400, code: 'invalid_value', param: 'rpm' });
      assertError(await owner.call('POST', `${T}/keys`, { name: 'zero', concurrent: 0 }), { status: 400, code: 'invalid_value', param: 'concurrent' });
      assertError(await owner.call('POST', `${T}/keys`, { name: 'typed', tpm: '5' }), { status: 400, code: 'invalid_type', param: 'tpm' });
      const made = await owner.call('POST', `${T}/keys`, { name: 'modest', rpm: 5, tpm: 50000 });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.json.key.rpm, 5);
      const path = `${T}/keys/${made.json.key.public_id}`;
      assertError(await owner.call('PATCH', path, { rpm: null }), { status: 400, code: 'invalid_value', param: 'rpm' });
      const narrowed = await owner.call('PATCH', path, { rpm: 1 });
      assert.equal(narrowed.status, 200, narrowed.text);
      await freshWindow();
      const key = made.json.secret;
      assert.equal((await chat(gw, key, 'echo')).headers.get('x-ratelimit-limit-requests'), '1');
      assertError(await chat(gw, key, 'echo'), { status: 429, code: 'key_rpm_exceeded' });
      const audit = await owner.call('GET', `${T}/audit`);
      const change = audit.json.data.find((e) => e.action === 'key.rules_changed' && e.target.startsWith(made.json.key.public_id));
      assert.match(change.target, /"rpm":5,"tpm":50000\} after \{.*"rpm":1,"tpm":50000\}$/);

      // A team's limits: its owner lowers them, never raises or removes one.
      const lowered = await owner.call('PATCH', `${T}/limits`, { rpm: 100 });
      assert.equal(lowered.status, 200, lowered.text);
      assert.equal(lowered.json.rpm, 100);
      assertError(await owner.call('PATCH', `${T}/limits`, { rpm: 150 }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', `${T}/limits`, { rpm: null }), { status: 400, code: 'invalid_value' });
      assertError(await owner.call('PATCH', `${T}/limits`, { tpm: 0 }), { status: 400, code: 'invalid_value', param: 'tpm' });
      assert.equal((await owner.call('GET', T)).json.rpm, 100);
      const teamAudit = (await owner.call('GET', `${T}/audit`)).json.data.find((e) => e.action === 'team.limits_changed');
      assert.match(teamAudit.target, /before \{\} after \{"rpm":100\}$/);
      await ok('teams', 'limits', 'limited', '--rpm', 'none');
    });

    test('without limits configured nothing is limited and no x-ratelimit header is sent', async () => {
      const open = structuredClone(config);
      delete open.limits;
      delete open.models.plain_model.limits;
      const g = await startGateway({ config: open, env: store.env });
      try {
        const key = await newKey('limited', 'unlimited');
        for (let i = 0; i < 20; i += 1) {
          const r = await chat(g, key, 'echo');
          assert.equal(r.status, 200, r.text);
          assert.equal(r.headers.get('x-ratelimit-limit-requests'), null);
        }
      } finally {
        await g.stop();
      }
    });

    // The burst starts just after a minute boundary (waiting for the next one, at most a minute).
    test('three gateways on one store admit exactly the limit of a burst in one minute', { timeout: 120_000 }, async () => {
      const shared = { ...config, limits: { key: { rpm: 50 } } };
      const gws = await Promise.all([0, 1, 2].map(() => startGateway({ config: shared, env: store.env })));
      try {
        const key = await newKey('limited', 'shared');
        const startedAt = await minuteStart();
        assert.ok(startedAt < 5_000, `the burst starts ${startedAt} ms into its minute`);
        const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => chat(gws[i % 3], key, 'echo')));
        const statuses = answers.map((r) => r.status);
        assert.equal(statuses.filter((s) => s === 200).length, 50, JSON.stringify(statuses.filter((s) => s !== 429)));
        assert.equal(statuses.filter((s) => s === 429).length, 950);
        for (const r of answers.filter((a) => a.status === 429)) {
          assert.equal(JSON.parse(r.text).error.code, 'key_rpm_exceeded');
        }
      } finally {
        await Promise.all(gws.map((g) => g.stop()));
      }
    });
  });
}
