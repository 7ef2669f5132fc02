// Tokens by kind where spend shows, on every engine: a billed request whose upstream reports
// cache reads and reasoning records them in its spend row, whole and streamed, and `tollgate
// admin spend` (table, --json, --csv, summary), the console's listing, CSV and breakdown per
// model show them; a cache hit's row keeps them; a row written before they were kept reads 0;
// the console's catalogue has the cached price.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, reasoningUsage } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, openaiProvider, waitFor, runTollgate,
} from '../fixtures/gateway.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';

const KINDS = ['cached_tokens', 'cache_write_tokens', 'cache_write_1h_tokens', 'audio_prompt_tokens',
  'reasoning_tokens', 'audio_completion_tokens'];
const USAGE = reasoningUsage(800);
// 200 uncached x 0.000001 + 800 cached x 0.0000001 + 40 out x 0.000002, exact in decimal.
const COST = 0.00036;
const EXPECTED = { cached_tokens: 800, cache_write_tokens: 0, cache_write_1h_tokens: 0, audio_prompt_tokens: 0, reasoning_tokens: 30, audio_completion_tokens: 0 };
// The prompt the mock reports is held for only when the body has as many bytes.
const PADDING = 'x'.repeat(USAGE.prompt_tokens + 100);

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const kindsOf = (o) => Object.fromEntries(KINDS.map((k) => [k, o[k]]));
/** A CSV line's fields (no field below holds a comma). */
const fields = (line) => line.split(',').map((f) => f.replace(/^"|"$/g, ''));

for (const engine of ENGINES) {
  describe(`tokens by kind in the spend log on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      const config = standardConfig(mock.url, dead, {
        gateway: { auth: 'required' },
        models: {
          cache_priced: {
            input_cost_per_token: 0.000001,
            cached_input_cost_per_token: 0.0000001,
            output_cost_per_token: 0.000002,
            max_input_tokens: 2000,
            max_output_tokens: 100,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url) },
          },
        },
      });
      config.storage = store.storage;
      config.console = { owner_email: 'founder@kinds.test' };
      gw = await startGateway({ config, env: store.env });
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('cache reads and reasoning reach the spend row, admin spend and the console', async () => {
      const key = await keyFor('kinds', '1');
      const body = chatBody(`${PADDING} mock:cached=800`, { max_tokens: 100 }, 'cache_priced');
      const whole = await postJson(gw.baseURL, '/v1/chat/completions', body, { headers: bearer(key) });
      assert.equal(whole.status, 200, whole.text);
      assert.equal(whole.json.usage.prompt_tokens_details.cached_tokens, 800);
      assert.equal(whole.json.usage['tollgate::cost'], COST);
      const streamed = await postJson(gw.baseURL, '/v1/chat/completions',
        { ...body, stream: true, stream_options: { include_usage: true } }, { headers: bearer(key) });
      assert.equal(streamed.status, 200, streamed.text);
      const plain = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(key) });
      assert.equal(plain.status, 200, plain.text);
      const ids = [whole, streamed, plain].map((r) => r.headers.get('x-request-id'));

      // tollgate admin spend list --json: the members it had, then the kinds.
      const rows = await spend('kinds');
      assert.deepEqual(rows.map((r) => r.request_id), ids);
      for (const row of rows.slice(0, 2)) {
        assert.deepEqual(kindsOf(row), EXPECTED);
        assert.equal(row.prompt_tokens, USAGE.prompt_tokens);
        assert.equal(row.completion_tokens, USAGE.completion_tokens);
        assert.equal(row.cost, COST);
        assert.equal(row.estimated, false);
        assert.deepEqual(Object.keys(row).slice(-KINDS.length), KINDS);
      }
      assert.deepEqual(kindsOf(rows[2]), Object.fromEntries(KINDS.map((k) => [k, 0])));

      // --csv: the kinds are the last columns, after key_name.
      const csv = (await ok('spend', 'list', '--team', 'kinds', '--csv')).stdout.trim().split('\n');
      const header = fields(csv[0]);
      assert.deepEqual(header.slice(-KINDS.length - 1), ['key_name', ...KINDS]);
      assert.deepEqual(fields(csv[1]).slice(-KINDS.length), ['800', '0', '0', '0', '30', '0']);
      assert.equal(fields(csv[1])[header.indexOf('cost')], String(COST));

      // The table says them; the summary sums them, with the uncached input.
      const table = (await ok('spend', 'list', '--team', 'kinds')).stdout;
      assert.match(table, /1000\+40 tokens \(800 cached, 30 reasoning\)/);
      const byModel = JSON.parse((await ok('spend', 'summary', '--team', 'kinds', '--by', 'model', '--json')).stdout);
      assert.deepEqual(byModel.find((g) => g.model === 'cache_priced'), {
        model: 'cache_priced', requests: 2, prompt_tokens: 2000, completion_tokens: 80, cost: 2 * COST,
        cached_tokens: 1600, cache_write_tokens: 0, cache_write_1h_tokens: 0, audio_prompt_tokens: 0,
        reasoning_tokens: 60, audio_completion_tokens: 0, uncached_prompt_tokens: 400,
      });

      // The console: its listing, CSV and breakdown per model.
      const owner = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'owner@kinds.test')).stdout));
      await ok('members', 'add', 'kinds', 'owner@kinds.test', '--role', 'owner');
      const T = `/console/api/teams/${await owner.teamId('kinds')}`;
      const listed = await owner.call('GET', `${T}/spend?request_id=${encodeURIComponent(ids[0])}`);
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(kindsOf(listed.json.data[0]), EXPECTED);
      const consoleCsv = (await owner.call('GET', `${T}/spend.csv`)).text.trim().split('\n');
      assert.deepEqual(fields(consoleCsv[0]).slice(-KINDS.length - 1), ['key_name', ...KINDS]);
      assert.deepEqual(fields(consoleCsv[1]).slice(-KINDS.length), ['800', '0', '0', '0', '30', '0']);
      const summary = await owner.call('GET', `${T}/spend/summary?by=model`);
      assert.equal(summary.status, 200, summary.text);
      const model = summary.json.data.find((g) => g.model === 'cache_priced');
      assert.deepEqual(
        [model.uncached_prompt_tokens, model.cached_tokens, model.cache_write_tokens, model.completion_tokens, model.cost],
        [400, 1600, 0, 80, 2 * COST]);
      const plainModel = summary.json.data.find((g) => g.model === 'mock_model');
      assert.equal(plainModel.uncached_prompt_tokens, plainModel.prompt_tokens);
    });

    test('a cache hit\'s row keeps the kinds of the answer it replays, at cost 0', async () => {
      const key = await keyFor('hits', '1');
      const body = chatBody(`${PADDING} mock:cached=800 hit`, { max_tokens: 100, 'tollgate::cache_options': { enabled: 'on' } }, 'cache_priced');
      const first = await postJson(gw.baseURL, '/v1/chat/completions', body, { headers: bearer(key) });
      assert.equal(first.status, 200, first.text);
      const second = await postJson(gw.baseURL, '/v1/chat/completions', body, { headers: bearer(key) });
      assert.equal(second.headers.get('tollgate-cache'), 'hit', second.text);
      const rows = await waitFor(async () => {
        const r = await spend('hits');
        return r.length === 2 ? r : null;
      }, 5000, 50);
      assert.deepEqual(rows.map((r) => [r.cache_hit, r.cost]), [[false, COST], [true, 0]]);
      assert.deepEqual(kindsOf(rows[1]), EXPECTED);
    });

    test('a row written before the kinds were kept reads 0 for each', async () => {
      await ok('teams', 'create', 'old-rows');
      const teamId = JSON.parse((await ok('teams', 'show', 'old-rows', '--json')).stdout).id;
      store.sql('INSERT INTO spend (request_id, created_at, team_id, key_public_id, endpoint, model, provider, '
        + 'variant, episode_id, prompt_tokens, completion_tokens, cost, tags, status, upstream_ms, streamed, '
        + `estimated, cache_hit) VALUES ('old-row', ${Date.now()}, '${teamId}', '', 'chat', 'mock_model', 'primary', '', `
        + "'e', 12, 4, 20000000, '{}', 200, 5, 0, 0, 0)");
      const rows = await spend('old-rows');
      assert.equal(rows.length, 1);
      assert.deepEqual(kindsOf(rows[0]), Object.fromEntries(KINDS.map((k) => [k, 0])));
      assert.equal(rows[0].prompt_tokens, 12);
    });

    test('the console\'s catalogue has the cached price: configured, else the input price', async () => {
      const user = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'viewer@kinds.test')).stdout));
      const r = await user.call('GET', '/console/api/models');
      assert.equal(r.status, 200, r.text);
      const priced = r.json.data.find((m) => m.id === 'cache_priced');
      assert.equal(priced.cached_input_cost_per_token, 0.0000001);
      assert.equal(priced.input_cost_per_token, 0.000001);
      const plain = r.json.data.find((m) => m.id === 'mock_model');
      assert.equal(plain.cached_input_cost_per_token, plain.input_cost_per_token);
      assert.equal(plain.cache_write_cost_per_token, undefined, 'shown only when configured');
      assert.equal(plain.price_tiers, undefined);
    });

    // Last: it takes the store back to version 10 under the running gateway, which writes no
    // spend meanwhile.
    test('tollgate migrate brings a store at version 10 up: its rows and aggregates read 0 for each kind', async () => {
      await ok('teams', 'create', 'upgraded');
      const teamId = JSON.parse((await ok('teams', 'show', 'upgraded', '--json')).stdout).id;
      const tables = ['spend', 'spend_daily', 'spend_daily_tags', 'spend_daily_users', 'inference_cache'];
      store.sql(tables.flatMap((t) => KINDS.map((k) => `ALTER TABLE ${t} DROP COLUMN ${k};`)).join(' ')
        // Later migrations undone too, so that the store is at version 10 as that tollgate left it.
        + ' ALTER TABLE api_keys DROP COLUMN expires_at; ALTER TABLE api_keys DROP COLUMN allowed_models;'
        + ' DROP TABLE limit_counters; DROP TABLE limit_slots; DROP TABLE key_spend;'
        + ' ALTER TABLE api_keys DROP COLUMN budget; ALTER TABLE api_keys DROP COLUMN budget_window;'
        + ['api_keys', 'teams'].flatMap((t) => ['rpm', 'tpm', 'concurrent'].map((c) => ` ALTER TABLE ${t} DROP COLUMN ${c};`)).join('')
        + ' DROP TABLE alert_outbox;'
        + ' DELETE FROM schema_migrations WHERE version >= 11;'
        + ' INSERT INTO spend (request_id, created_at, team_id, key_public_id, endpoint, model, provider, '
        + 'variant, episode_id, prompt_tokens, completion_tokens, cost, tags, status, upstream_ms, streamed, '
        + `estimated, cache_hit) VALUES ('v10-row', ${Date.now()}, '${teamId}', '', 'chat', 'mock_model', 'primary', '', `
        + "'e', 12, 4, 20000000, '{}', 200, 5, 0, 0, 0);"
        + ' INSERT INTO spend_daily (team_id, day, model, key_public_id, requests, prompt_tokens, completion_tokens, cost) '
        + `VALUES ('${teamId}', '${new Date().toISOString().slice(0, 10)}', 'mock_model', '', 1, 12, 4, 20000000);`);
      const m = await runTollgate(['migrate', '--config', gw.configPath], { env: store.env });
      assert.equal(m.code, 0, m.stderr);
      assert.match(m.stdout, /schema at version \d+ \(was 10\)/);
      const rows = await spend('upgraded');
      assert.deepEqual(rows.map((r) => [r.request_id, r.prompt_tokens, kindsOf(r)]),
        [['v10-row', 12, Object.fromEntries(KINDS.map((k) => [k, 0]))]]);
      const byModel = JSON.parse((await ok('spend', 'summary', '--team', 'upgraded', '--by', 'model', '--json')).stdout);
      assert.deepEqual(byModel.map((g) => [g.requests, g.cached_tokens, g.uncached_prompt_tokens]), [[1, 0, 12]]);
    });
  });
}
