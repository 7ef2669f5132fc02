// GET /metrics through HTTP: after a mix of requests (whole, streamed, a failed upstream, a
// retried one, a cache hit, an Idempotency-Key replay, one refused for its balance) every family
// is there with sensible values, promtool accepts the text, and the cost and uncollected counters
// agree with the committed spend rows per model within 1e-9 USD. Only an allowed source or the
// bearer token is answered; anyone else gets the 404 of an unknown route. With team labels on,
// per model and team; on PostgreSQL, over two gateways sharing the store, their counters summed.
// With the console on a listener of its own, /metrics is served there.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, openaiProvider, adminOf, postJson, chatBody, waitFor, marker,
} from '../fixtures/gateway.mjs';
import { request } from '../fixtures/console.mjs';
import { samples, total, scrape } from '../fixtures/metrics.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const TOKEN_ENV = 'TOLLGATE_TEST_METRICS_TOKEN';
const TOKEN = 'metrics-token-0123456789abcdef';

for (const engine of ENGINES) {
  describe(`metrics on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let gateways; // Both serve the mix, their scrapes summed.
    const { keyFor } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    let key;
    let broke;

    /** Each model and team's committed cost and uncollected amount, in pico-USD, from the store. */
    function committed() {
      const out = [];
      const rows = store.sql('SELECT s.model, t.name, SUM(s.cost), SUM(s.uncollected) FROM spend s ' +
        'JOIN teams t ON t.id = s.team_id GROUP BY s.model, t.name;');
      for (const line of rows.split('\n')) {
        const [model, team, cost, uncollected] = line.trim().split('|').map((x) => x.trim());
        if (model) out.push({ model, team, cost: BigInt(cost), uncollected: BigInt(uncollected) });
      }
      return out;
    }

    /** Every gateway's samples, concatenated (so that total() sums them). */
    const scrapeAll = async () => (await Promise.all(gateways.map(async (g) => samples((await scrape(g.baseURL)).text)))).flat();

    /** Whether the counters' increase from `before` to `after` equals the rows, per model and team. */
    function agrees(before, after, rows) {
      return rows.every(({ model, team, cost, uncollected }) => {
        const where = { model, team };
        const c = total(after, 'tollgate_cost_usd_total', where) - total(before, 'tollgate_cost_usd_total', where);
        const u = total(after, 'tollgate_uncollected_usd_total', where) - total(before, 'tollgate_uncollected_usd_total', where);
        return Math.abs(c - Number(cost) / 1e12) <= 1e-9 && Math.abs(u - Number(uncollected) / 1e12) <= 1e-9;
      });
    }

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      const config = standardConfig(mock.url, dead, {
        gateway: { auth: 'required' },
        models: {
          // Not ZDR (whose answers are never cached), priced.
          cached_model: {
            input_cost_per_token: 0.000001,
            output_cost_per_token: 0.000002,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url) },
          },
        },
      });
      config.storage = store.storage;
      config.metrics = { team_labels: true };
      gw = await startGateway({ config, env: store.env });
      gateways = [gw];
      if (engine.name === 'postgres') {
        gateways.push(await startGateway({ config, env: store.env }));
      }
      key = await keyFor('metrics-a', '10');
      broke = await keyFor('metrics-broke', '0');
    });

    after(async () => {
      await Promise.all((gateways ?? []).map((g) => g.stop()));
      await mock?.close();
      store?.stop();
    });

    test('after a mix of requests every family is there, promtool accepts it, money agrees with the spend rows', async () => {
      const before = await scrapeAll();
      let turn = 0; // Requests go to the gateways in turn.
      const next = () => gateways[turn++ % gateways.length].baseURL;
      const chat = (body, headers = {}, k = key, base = next()) =>
        postJson(base, '/v1/chat/completions', body, { headers: { ...bearer(k), ...headers } });

      assert.equal((await chat(chatBody(marker('whole')))).status, 200);
      const streamed = await fetch(`${next()}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(key) },
        body: JSON.stringify(chatBody(marker('stream'), { stream: true })),
      });
      assert.equal(streamed.status, 200);
      await streamed.text();
      assert.equal((await chat(chatBody(`${marker('fail')} mock:status=400`))).status, 400);
      assert.equal((await chat(chatBody(marker('retried'), {}, 'fallback_model'))).status, 200);
      const cached = chatBody(marker('cached'), { 'tollgate::cache_options': { enabled: 'on' } }, 'cached_model');
      // A hit and a replay on the gateway that kept the answer (another one finds it once its
      // write committed).
      const keeper = next();
      assert.equal((await chat(cached, {}, key, keeper)).status, 200);
      const hit = await chat(cached, {}, key, keeper);
      assert.equal(hit.headers.get('tollgate-cache'), 'hit');
      const once = chatBody(marker('once'), {}, 'cached_model');
      const idem = { 'idempotency-key': `k-${marker('idem')}` };
      assert.equal((await chat(once, idem, key, keeper)).status, 200);
      assert.equal((await chat(once, idem, key, keeper)).status, 200);
      const refused = await chat(chatBody(marker('broke')), {}, broke);
      assert.equal(refused.status, 403);
      assert.equal(refused.json.error.code, 'insufficient_balance');
      assert.equal((await fetch(`${gw.baseURL}/no/such/route`)).status, 404);

      // The settlements commit after their answers: the counters catch up with the rows.
      let after;
      await waitFor(async () => {
        after = await scrapeAll();
        return agrees(before, after, committed());
      }, 5000, 50);
      const rows = committed();
      assert.ok(rows.some((r) => r.model === 'mock_model' && r.team === 'metrics-a' && r.cost > 0n), 'the mix was charged');
      assert.ok(agrees(before, after, rows), JSON.stringify({ rows: rows.map((r) => ({ ...r, cost: String(r.cost), uncollected: String(r.uncollected) })),
        scraped: after.filter((x) => x.name.startsWith('tollgate_cost') || x.name.startsWith('tollgate_uncollected')) }));

      const res = await scrape(gw.baseURL);
      assert.equal(res.status, 200);
      assert.match(res.type, /^text\/plain; version=0\.0\.4/);
      const promtool = spawnSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
      assert.equal(promtool.status, 0, `promtool: ${promtool.stdout}${promtool.stderr}`);
      assert.equal(`${promtool.stdout}${promtool.stderr}`.trim(), '', 'no lint warnings');

      const chatRoute = { route: '/v1/chat/completions' };
      const mockRoute = { ...chatRoute, model: 'mock_model', provider: 'primary' };
      assert.ok(total(after, 'tollgate_requests_total', { ...chatRoute, status_class: '2xx' }) >= 7);
      assert.ok(total(after, 'tollgate_requests_total', { ...mockRoute, status_class: '2xx' }) >= 2);
      assert.ok(total(after, 'tollgate_requests_total', { ...mockRoute, status_class: '4xx' }) >= 1);
      assert.ok(total(after, 'tollgate_requests_total', { route: 'unmatched', model: 'unknown', status_class: '4xx' }) >= 1);
      assert.ok(total(after, 'tollgate_requests_total', { ...chatRoute, status_class: '4xx' }) >= 2, 'the broke team refused');
      const genai = { gen_ai_operation_name: 'chat', gen_ai_request_model: 'mock_model', gen_ai_provider_name: 'primary' };
      assert.ok(total(after, 'gen_ai_server_request_duration_seconds_count', genai) >= 3);
      assert.ok(after.some((s) => s.name === 'gen_ai_server_request_duration_seconds_count' &&
        s.labels.gen_ai_request_model === 'mock_model' && s.labels.error_type && s.value >= 1), 'the failed one has its error type');
      assert.ok(total(after, 'gen_ai_server_time_to_first_token_seconds_count', genai) >= 2);
      assert.ok(total(after, 'gen_ai_client_token_usage_sum', { ...genai, gen_ai_token_type: 'input' }) > 0);
      assert.ok(total(after, 'gen_ai_client_token_usage_sum', { ...genai, gen_ai_token_type: 'output' }) > 0);
      assert.ok(total(after, 'gen_ai_client_operation_duration_seconds_count', { gen_ai_provider_name: 'primary' }) >= 5);
      assert.ok(total(after, 'tollgate_upstream_attempts_total', { model: 'fallback_model', provider: 'dead' }) >= 1);
      assert.ok(total(after, 'tollgate_upstream_failures_total', { model: 'fallback_model', provider: 'dead' }) >= 1);
      assert.ok(total(after, 'tollgate_upstream_retries_total', { model: 'fallback_model', provider: 'primary' }) >= 1);
      assert.ok(total(after, 'tollgate_upstream_failures_total', { model: 'mock_model' }) >= 1);
      assert.ok(total(after, 'tollgate_gateway_overhead_seconds_count', { route: '/v1/chat/completions' }) >= 8);
      assert.ok(total(after, 'tollgate_cache_lookups_total', { outcome: 'hit' }) >= 1);
      assert.ok(total(after, 'tollgate_cache_lookups_total', { outcome: 'miss' }) >= 1);
      // The hit's whole response: its head and its body.
      assert.ok(total(after, 'tollgate_cache_served_bytes_total') > Buffer.byteLength(hit.text));
      assert.ok(total(after, 'tollgate_cache_memory_bytes') > 0);
      assert.ok(total(after, 'tollgate_idempotency_keys_total', { outcome: 'replayed' }) >= 1);
      assert.equal(total(after, 'tollgate_circuit_breaker_state', { model: 'mock_model', provider: 'primary', state: 'closed' }), gateways.length);
      const builds = after.filter((x) => x.name === 'tollgate_build_info');
      assert.equal(builds.length, gateways.length);
      for (const b of builds) {
        assert.match(b.labels.version, /^[0-9]+\.[0-9]+\.[0-9]+$/);
        assert.match(b.labels.commit, /^[0-9a-f]{7,}$/);
        assert.match(b.labels.config, /^[0-9a-f]{16}$/);
        assert.equal(b.value, 1);
      }
      // The scrape's own connection is open; no stream is left.
      assert.ok(total(after, 'tollgate_open_connections') >= 1);
      assert.equal(total(after, 'tollgate_open_streams'), 0);
      // Every hold of the mix was settled or released.
      assert.ok(after.some((x) => x.name === 'tollgate_holds_in_flight'));
      await waitFor(async () => {
        const now = await scrapeAll();
        return total(now, 'tollgate_holds_in_flight') === 0 && total(now, 'tollgate_held_usd') === 0;
      }, 5000, 50);
      assert.ok(total(after, 'tollgate_ledger_batch_operations_count') >= 1);
      assert.ok(total(after, 'tollgate_ledger_commit_duration_seconds_count') >= 1);
      // Label values never carry what a client sent.
      assert.doesNotMatch(res.text, /metrics-broke|whole-|upstream-model/);
    });

    test('a stream is counted while it is sent', async () => {
      const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(key) },
        body: JSON.stringify(chatBody(`${marker('slow')} mock:stream-slow=100`, { stream: true })),
      });
      assert.equal(res.status, 200);
      const reader = res.body.getReader();
      await reader.read();
      assert.equal(total(samples((await scrape(gw.baseURL)).text), 'tollgate_open_streams'), 1);
      while (!(await reader.read()).done) { /* the rest of the stream */ }
      await waitFor(async () => total(samples((await scrape(gw.baseURL)).text), 'tollgate_open_streams') === 0, 3000, 25);
    });
  });
}

describe('who may read /metrics', () => {
  let mock;
  let gw;

  before(async () => {
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead);
    // A range without the tests' loopback source: only the token is answered.
    config.metrics = { allow: ['192.0.2.0/24'], token: `env::${TOKEN_ENV}` };
    gw = await startGateway({ config, env: { [TOKEN_ENV]: TOKEN } });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('a source outside [metrics] allow gets the 404 of an unknown route, the bearer token the metrics', async () => {
    const refused = await scrape(gw.baseURL);
    assert.equal(refused.status, 404);
    const unknown = await fetch(`${gw.baseURL}/no-such-route`);
    assert.equal(JSON.parse(refused.text).error.code, (await unknown.json()).error.code);
    assert.equal((await scrape(gw.baseURL, { authorization: `Bearer ${TOKEN}x` })).status, 404);
    assert.equal((await scrape(gw.baseURL, { authorization: `Bearer ${TOKEN.slice(1)}` })).status, 404);
    const answered = await scrape(gw.baseURL, { authorization: `Bearer ${TOKEN}` });
    assert.equal(answered.status, 200);
    assert.match(answered.text, /# TYPE tollgate_requests_total counter/);
    // The refused scrapes were counted as unknown routes, not as /metrics.
    assert.doesNotMatch(answered.text, /route="\/metrics",status_class="4xx"/);
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: answered.text, encoding: 'utf8' });
    assert.equal(promtool.status, 0, `promtool: ${promtool.stdout}${promtool.stderr}`);
    assert.equal(`${promtool.stdout}${promtool.stderr}`.trim(), '', 'no lint warnings');
    assert.doesNotMatch(answered.text, new RegExp(TOKEN));
  });
});

describe('/metrics on the console\'s own listener', () => {
  let gw;

  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.console = { listen: '127.0.0.1:0' };
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
  });

  test('it is served there, not on the gateway\'s listener, with the console\'s sign-ins', async () => {
    const port = /^tollgate console listening on 127\.0\.0\.1:(\d+)$/m.exec(gw.stdout)?.[1];
    assert.ok(port, `no console listener line in: ${gw.stdout}`);
    const consoleURL = `http://127.0.0.1:${port}`;
    const failed = await request(consoleURL, 'POST', '/console/api/auth/link',
      { headers: { origin: consoleURL }, body: { token: 'll-tollgate-' + 'x'.repeat(32) } });
    assert.equal(failed.status, 401);
    const onConsole = await scrape(consoleURL);
    assert.equal(onConsole.status, 200);
    assert.match(onConsole.text, /# TYPE tollgate_requests_total counter/);
    const all = samples(onConsole.text);
    assert.equal(total(all, 'tollgate_console_sign_ins_total', { outcome: 'failed' }), 1);
    assert.equal(total(all, 'tollgate_console_sign_ins_total', { outcome: 'succeeded' }), 0);
    const onGateway = await scrape(gw.baseURL);
    assert.equal(onGateway.status, 404);
    assert.equal(JSON.parse(onGateway.text).error.code, 'not_found');
  });
});

describe('[metrics] enabled = false', () => {
  let gw;

  before(async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
    config.metrics = { enabled: false };
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
  });

  test('serves no /metrics, even to loopback: the path is unknown', async () => {
    const r = await scrape(gw.baseURL);
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.text).error.code, 'not_found');
    assert.equal((await fetch(`${gw.baseURL}/health`)).status, 200);
  });
});
