// A key's spend budget, end to end on every engine: held at admission like the balance (its most
// cost), the unspent part given back at settlement, never overspent, 403 key_budget_exhausted
// with the window's reset time, a cache hit neither refused nor charged; exact across three
// gateways sharing one store; set by `tollgate admin` and the console API.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError,
} from '../fixtures/gateway.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const ON = { 'tollgate::cache_options': { enabled: 'on' } };
// Every request the same bytes: its hold is the same, and the mock bills all of it.
const BILL_MAX = 'budget test mock:bill-max';
const PICO = 10n ** 12n;
const pico = (usd) => {
  const [whole, frac = ''] = String(usd).split('.');
  return BigInt(whole) * PICO + BigInt((frac + '0'.repeat(12)).slice(0, 12));
};
const usd = (p) => `${p / PICO}.${String(p % PICO).padStart(12, '0')}`.replace(/\.?0+$/, '');

for (const engine of ENGINES) {
  describe(`key budgets on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;
    const { ok, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    // `out_only` prices output tokens alone: a request's hold is its max_tokens' price, which
    // mock:bill-max charges in full.
    const chat = (g, key, content = BILL_MAX, extra = { max_tokens: 10 }) =>
      postJson(g.baseURL, '/v1/chat/completions', chatBody(content, extra, 'out_only'), { headers: bearer(key) });
    let hold; // What one BILL_MAX request holds and is charged, in pico-USD.

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
      // A thousand requests at once through three gateways are slow to start under the
      // sanitizers: the admitted ones wait their turn, so their upstream may take its time.
      const patient = { connect_timeout_ms: 10_000, first_byte_timeout_ms: 30_000, total_timeout_ms: 60_000 };
      config.models.out_only = {
        ...config.models.mock_model,
        input_cost_per_token: 0,
        security: [],
        providers: { primary: { ...config.models.mock_model.providers.primary, ...patient } },
      };
      config.storage = store.storage;
      config.console = { owner_email: 'operator@budgets.test' };
      gw = await startGateway({ config, env: store.env });
      await ok('teams', 'create', 'budgeted', '--balance', '100');
      const probe = (await ok('keys', 'create', '--team', 'budgeted', '--name', 'probe')).stdout.trim();
      const r = await chat(gw, probe);
      assert.equal(r.status, 200, r.text);
      const [row] = await spend('budgeted');
      hold = pico(row.cost);
      assert.equal(hold, 10n * pico('0.000002'));
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('a key with a budget of three requests gets three, then 403 key_budget_exhausted naming the reset', async () => {
      const key = (await ok('keys', 'create', '--team', 'budgeted', '--name', 'three',
        '--budget-usd', usd(3n * hold), '--budget-window', 'day')).stdout.trim();
      const listed = JSON.parse((await ok('keys', 'list', '--team', 'budgeted', '--json')).stdout)
        .find((k) => k.name === 'three');
      assert.equal(pico(String(listed.budget_usd)), 3n * hold);
      assert.equal(listed.budget_window, 'day');
      for (let i = 0; i < 3; i += 1) assert.equal((await chat(gw, key)).status, 200);
      const refused = await chat(gw, key);
      assertError(refused, { status: 403, type: 'permission_error', code: 'key_budget_exhausted' });
      const tomorrow = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString().slice(0, 19);
      assert.match(JSON.parse(refused.text).error.message, new RegExp(`resets at ${tomorrow}`));
      const rows = (await spend('budgeted')).filter((r) => r.key === key.split('-')[2]);
      assert.equal(rows.length, 3);
      assert.equal(rows.reduce((s, r) => s + pico(r.cost), 0n), 3n * hold);
      // The key's spend in its current window is listed with it.
      const after = JSON.parse((await ok('keys', 'list', '--team', 'budgeted', '--json')).stdout)
        .find((k) => k.name === 'three');
      assert.equal(pico(String(after.budget_spent_usd)), 3n * hold);
    });

    test('what a request does not spend goes back; a cache hit is neither refused nor charged', async () => {
      const key = (await ok('keys', 'create', '--team', 'budgeted', '--name', 'cheap',
        '--budget-usd', usd(20n * hold), '--budget-window', 'total')).stdout.trim();
      // The mock's usual answer (a few tokens) costs far less than its hold of 100 tokens: the
      // rest goes back each time, so two holds' worth of budget serves fifteen requests.
      for (let i = 0; i < 15; i += 1) {
        const r = await chat(gw, key, `cheap ${i}`, { max_tokens: 100, ...ON });
        assert.equal(r.status, 200, r.text);
      }
      assert.equal((await chat(gw, key, 'cheap 0', { max_tokens: 100, ...ON })).headers.get('tollgate-cache'), 'hit');
      // Narrowed below one hold: no request fits, but a cached answer is still served.
      await ok('keys', 'update', key.split('-')[2], '--budget-usd', usd(hold / 2n), '--budget-window', 'total');
      const refused = await chat(gw, key, 'cheap fresh');
      assertError(refused, { status: 403, code: 'key_budget_exhausted', param: 'max_tokens' });
      assert.equal((await chat(gw, key, 'cheap 1', { max_tokens: 100, ...ON })).headers.get('tollgate-cache'), 'hit');
      await ok('keys', 'update', key.split('-')[2], '--budget-usd', 'none');
      assert.equal((await chat(gw, key, 'cheap fresh')).status, 200);
    });

    test('the console API sets a budget exactly (a number or a decimal string), and null removes it', async () => {
      const owner = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'owner@budgets.test')).stdout));
      await ok('members', 'add', 'budgeted', 'owner@budgets.test', '--role', 'owner');
      const T = `/console/api/teams/${await owner.teamId('budgeted')}`;
      const made = await owner.call('POST', `${T}/keys`, { name: 'console-budget', budget_usd: '12.345678901234', budget_window: 'week' });
      assert.equal(made.status, 201, made.text);
      assert.equal(String(made.json.key.budget_usd), '12.345678901234');
      assert.equal(made.json.key.budget_window, 'week');
      const path = `${T}/keys/${made.json.key.public_id}`;
      assertError(await owner.call('PATCH', path, { budget_usd: -1 }), { status: 400, code: 'invalid_value', param: 'budget_usd' });
      assertError(await owner.call('PATCH', path, { budget_usd: '1e3' }), { status: 400, code: 'invalid_value', param: 'budget_usd' });
      assertError(await owner.call('PATCH', path, { budget_usd: 5, budget_window: 'year' }), { status: 400, code: 'invalid_value', param: 'budget_window' });
      assertError(await owner.call('PATCH', path, { budget_usd: true }), { status: 400, code: 'invalid_type', param: 'budget_usd' });
      const set = await owner.call('PATCH', path, { budget_usd: 0.1 });
      assert.equal(set.status, 200, set.text);
      assert.equal(String(set.json.key.budget_usd), '0.1');
      assert.equal(set.json.key.budget_window, 'month');
      const cleared = await owner.call('PATCH', path, { budget_usd: null });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal(cleared.json.key.budget_usd, undefined);
    });

    test('three gateways on one store admit exactly the requests a budget covers, and spend equals it', async () => {
      const gws = [gw, ...await Promise.all([0, 1].map(() => startGateway({ config, env: store.env })))];
      try {
        const key = (await ok('keys', 'create', '--team', 'budgeted', '--name', 'twenty',
          '--budget-usd', usd(20n * hold), '--budget-window', 'month')).stdout.trim();
        const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => chat(gws[i % 3], key)));
        const statuses = answers.map((r) => r.status);
        assert.equal(statuses.filter((s) => s === 200).length, 20, JSON.stringify(statuses.filter((s) => s !== 403)));
        assert.equal(statuses.filter((s) => s === 403).length, 980);
        const rows = (await spend('budgeted')).filter((r) => r.key === key.split('-')[2]);
        assert.equal(rows.length, 20);
        assert.equal(rows.reduce((s, r) => s + pico(r.cost), 0n), 20n * hold);
      } finally {
        await Promise.all(gws.slice(1).map((g) => g.stop()));
      }
    });
  });
}
