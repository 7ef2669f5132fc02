// Balances, holds and the spend log through HTTP and `tollgate admin`, on every engine: exact
// charges streamed and not, the cost in the response, dryrun, 403 insufficient_balance and
// top-up, upstream failures, 1,000 concurrent requests against a balance that covers exactly 50,
// open mode with and without open_team, and the billing commands' output and errors.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, MOCK_USAGE } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError,
  assertCompletion, openaiProvider, waitFor,
} from '../fixtures/gateway.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
// One pico-USD is the unit; these prices make every cost below exact in decimal.
const OUT_PRICE = 0.000001;
const OUT_PRICE_PICO = 1_000_000n;

/** Decimal USD text of a count of pico-USD, exact (no float on the way). */
const usd = (pico) => `${pico / 10n ** 12n}.${(pico % 10n ** 12n).toString().padStart(12, '0')}`;

/** POSTs `n` requests at once, spread in turn over `baseURLs`, each gateway over a pool of
 * `sockets` connections; returns their statuses and bodies. */
async function burst(baseURLs, body, headers, n, sockets = 64) {
  const agents = baseURLs.map(() => new http.Agent({ keepAlive: true, maxSockets: sockets }));
  const one = (i) => new Promise((resolve, reject) => {
    const url = new URL(baseURLs[i % baseURLs.length] + '/v1/chat/completions');
    const agent = agents[i % agents.length];
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  try {
    return await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

for (const engine of ENGINES) {
  describe(`billing on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;

    const { admin, ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const team = async (name) => JSON.parse((await ok('teams', 'show', name, '--json')).stdout);
    // A gateway keeps what a request did not cost at hand for the team's next requests (its
    // escrow, counted in `reserved`), and gives it back after a second unused.
    const settledTeam = (name) => waitFor(async () => {
      const t = await team(name);
      return t.reserved === 0 ? t : null;
    }, 5000, 100);

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = standardConfig(mock.url, dead, {
        gateway: { auth: 'required' },
        models: {
          // Reserved maximum = real cost when max_tokens is the mock's completion tokens.
          exact_model: {
            input_cost_per_token: 0,
            output_cost_per_token: OUT_PRICE,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url) },
          },
        },
      });
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    test('a charge is usage x price exactly, in the response, the row and the balance', async () => {
      const key = await keyFor('acme', '1');
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::tags': { feature: 'search' } }), { headers: bearer(key) });
      assertCompletion(r);
      // mock_model: 12 x 0.000001 + 4 x 0.000002
      assert.equal(r.json.usage['tollgate::cost'], 0.00002);
      const s = await postJson(gw.baseURL, '/v1/chat/completions',
        chatBody('hi', { stream: true, stream_options: { include_usage: true } }), { headers: bearer(key) });
      assert.equal(s.status, 200);
      const usageChunk = s.text.split('\n\n').filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6))).find((c) => c.usage);
      assert.equal(usageChunk.usage['tollgate::cost'], 0.00002);
      const rows = await spend('acme');
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(row.cost, 0.00002);
        assert.equal(row.prompt_tokens, MOCK_USAGE.prompt_tokens);
        assert.equal(row.completion_tokens, MOCK_USAGE.completion_tokens);
        assert.equal(row.status, 200);
        assert.equal(row.estimated, false);
        assert.equal(row.model, 'mock_model');
      }
      assert.deepEqual(rows.map((row) => row.streamed), [false, true]);
      assert.deepEqual(rows[0].tags, { feature: 'search' });
      assert.equal(rows[0].request_id, r.headers.get('x-request-id'));
      const t = await settledTeam('acme');
      assert.equal(t.balance, 0.99996);
      const byTag = JSON.parse((await ok('spend', 'summary', '--team', 'acme', '--by', 'tag', '--json')).stdout);
      // No kind of token reported: each is 0, and every prompt token is uncached.
      const none = { cached_tokens: 0, cache_write_tokens: 0, cache_write_1h_tokens: 0, audio_prompt_tokens: 0, reasoning_tokens: 0, audio_completion_tokens: 0 };
      assert.deepEqual(byTag.find((g) => g.tag === 'feature=search'), { tag: 'feature=search', requests: 1, prompt_tokens: 12, completion_tokens: 4, cost: 0.00002, ...none, uncached_prompt_tokens: 12 });
      const byModel = JSON.parse((await ok('spend', 'summary', '--team', 'acme', '--by', 'model', '--json')).stdout);
      assert.deepEqual(byModel, [{ model: 'mock_model', requests: 2, prompt_tokens: 24, completion_tokens: 8, cost: 0.00004, ...none, uncached_prompt_tokens: 24 }]);
      assert.equal((await spend('acme', '--tag', 'feature=search')).length, 1);
      assert.equal((await spend('acme', '--model', 'echo')).length, 0);
    });

    test('dryrun needs a valid key but leaves balance and spend log untouched', async () => {
      const key = await keyFor('dry', '1');
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::dryrun': true }), { headers: bearer(key) });
      assertCompletion(r);
      assert.equal(r.json.usage['tollgate::cost'], undefined);
      assert.equal((await spend('dry')).length, 0);
      assert.equal((await team('dry')).balance, 1);
      const bad = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::dryrun': true }), { headers: bearer('sk-tollgate-nope-nope') });
      assert.equal(bad.status, 401);
      // Its hold went back, and the access log names it.
      assert.equal((await settledTeam('dry')).balance, 1);
      const line = gw.stderr.split('\n').find((l) => l.includes(r.headers.get('x-request-id')));
      assert.equal(JSON.parse(line).dryrun, true, line);
    });

    test('a dryrun is admitted as a billed request is: no inference past an empty balance', async () => {
      const key = await keyFor('broke', '0.000001');
      const before = mock.requests.length;
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::dryrun': true }), { headers: bearer(key) });
      assertError(r, { status: 403, type: 'permission_error', code: 'insufficient_balance' });
      assert.equal(mock.requests.length, before, 'nothing was sent upstream');
      // An operator may refuse dryruns altogether.
      const strict = await startGateway({ config: { ...config, gateway: { ...config.gateway, allow_dryrun: false } }, env: store.env });
      try {
        const rich = await keyFor('rich', '10');
        const refused = await postJson(strict.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::dryrun': true }), { headers: bearer(rich) });
        const e = assertError(refused, { status: 403, type: 'permission_error', code: 'dryrun_not_allowed' });
        assert.equal(e.param, 'tollgate::dryrun');
        assertCompletion(await postJson(strict.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(rich) }));
      } finally {
        await strict.stop();
      }
      // Or one team, whose owner turns them off on every gateway at once.
      const teamKey = await keyFor('nodry', '10');
      const dry = () => postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { 'tollgate::dryrun': true }), { headers: bearer(teamKey) });
      assertCompletion(await dry());
      await ok('teams', 'dryrun', 'nodry', 'deny');
      const e = assertError(await dry(), { status: 403, type: 'permission_error', code: 'dryrun_not_allowed' });
      assert.match(e.message, /team does not take/);
      assertCompletion(await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(teamKey) }));
      await ok('teams', 'dryrun', 'nodry', 'allow');
      assertCompletion(await dry());
      assert.equal((await admin('teams', 'dryrun', 'nodry', 'maybe')).code, 2);
    });

    test('a balance that cannot cover the maximum gets 403 insufficient_balance; a top-up restores access', async () => {
      const key = await keyFor('poor', '0.000001');
      const before = mock.requests.length;
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(key) });
      const e = assertError(r, { status: 403, type: 'permission_error', code: 'insufficient_balance' });
      assert.match(e.message, /short by/);
      assert.equal(mock.requests.length, before, 'nothing was sent upstream');
      await ok('teams', 'topup', 'poor', '1');
      assertCompletion(await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(key) }));
    });

    test('an image is held at more than its bytes: up to the model\'s input limit', async () => {
      // mock_model: 1000 input tokens at most (0.001 USD) and 500 output (0.001 USD).
      const key = await keyFor('viewer', '0.0015');
      const image = {
        model: 'mock_model',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: 'https://x.io/a.png' } }] }],
      };
      const e = assertError(await postJson(gw.baseURL, '/v1/chat/completions', image, { headers: bearer(key) }),
        { status: 403, type: 'permission_error', code: 'insufficient_balance' });
      assert.match(e.message, /may cost up to 0\.002 USD/);
      assertCompletion(await postJson(gw.baseURL, '/v1/chat/completions', chatBody('what is it?'), { headers: bearer(key) }));
    });

    test('an upstream failure is logged with its status at zero cost and releases the hold', async () => {
      const key = await keyFor('failing', '1');
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'dead_model'), { headers: bearer(key) });
      assert.equal(r.status, 502);
      const rows = await spend('failing');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].status, 502);
      assert.equal(rows[0].cost, 0);
      const t = await settledTeam('failing');
      assert.equal(t.balance, 1);
    });

    test('a stream cut mid-way is charged for the chunks relayed, flagged as estimated', async () => {
      const key = await keyFor('cut', '1');
      const s = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('mock:cut', { stream: true }, 'exact_model'), { headers: bearer(key) });
      assert.equal(s.status, 200);
      assert.doesNotMatch(s.text, /\[DONE\]/);
      const rows = await spend('cut');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].estimated, true);
      assert.equal(rows[0].status, 502);
      assert.ok(rows[0].completion_tokens > 0);
      assert.equal(rows[0].cost, rows[0].completion_tokens * OUT_PRICE);
      await settledTeam('cut');
    });

    test('a client that hangs up mid-stream is charged for the chunks it was sent, status 499', async () => {
      const key = await keyFor('leaver', '1');
      const ac = new AbortController();
      const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(key) },
        body: JSON.stringify(chatBody('mock:stream-slow=100', { stream: true }, 'exact_model')),
        signal: ac.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body.getReader();
      let seen = '';
      while ((seen.match(/"content":"/g) ?? []).length < 3) {
        const { value, done } = await reader.read();
        assert.ok(!done, 'the stream ended before three content chunks');
        seen += Buffer.from(value).toString('utf8');
      }
      ac.abort();
      await reader.cancel().catch(() => {});
      const rows = await waitFor(async () => {
        const r = await spend('leaver');
        return r.length > 0 ? r : null;
      }, 5000, 100);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].status, 499);
      assert.equal(rows[0].estimated, true);
      assert.ok(rows[0].completion_tokens >= 3 && rows[0].completion_tokens < 20, `completion_tokens ${rows[0].completion_tokens}`);
      assert.equal(rows[0].cost, rows[0].completion_tokens * OUT_PRICE);
      assert.equal((await settledTeam('leaver')).balance, Number(usd(10n ** 12n - BigInt(rows[0].completion_tokens) * OUT_PRICE_PICO)));
    });

    // PostgreSQL is the engine for replicas: there, three gateways share the one balance.
    const replicas = engine.name === 'postgres' ? 3 : 1;
    test(`1,000 concurrent requests over ${replicas} gateway(s) against a balance for exactly 50: 50 succeed, the balance ends at zero`, async () => {
      const key = await keyFor('exact', usd(50n * BigInt(MOCK_USAGE.completion_tokens) * OUT_PRICE_PICO));
      const others = await Promise.all(Array.from({ length: replicas - 1 }, () => startGateway({ config, env: store.env })));
      try {
        const body = chatBody('hi', { max_tokens: MOCK_USAGE.completion_tokens }, 'exact_model');
        const results = await burst([gw, ...others].map((g) => g.baseURL), body, bearer(key), 1000);
        const ok200 = results.filter((r) => r.status === 200).length;
        const refused = results.filter((r) => r.status === 403 && JSON.parse(r.text).error.code === 'insufficient_balance').length;
        assert.equal(ok200, 50);
        assert.equal(refused, 950);
      } finally {
        await Promise.all(others.map((g) => g.stop()));
      }
      const t = await settledTeam('exact');
      assert.equal(t.balance, 0);
      const rows = await spend('exact');
      assert.equal(rows.length, 50);
      assert.ok(rows.every((row) => row.cost === MOCK_USAGE.completion_tokens * OUT_PRICE));
    });

    // A database server can go away; a SQLite file cannot. No answer leaves without its charge.
    if (engine.name === 'postgres') test('while the store is down no answer is given uncharged: 503 billing_unavailable, and billing resumes after', async () => {
      const key = await keyFor('outage', '1');
      assertCompletion(await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(key) }));
      store.halt();
      try {
        for (const stream of [false, true]) {
          const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', { stream }), { headers: bearer(key) });
          if (r.status === 200) {
            // The 200 of a stream goes out before the charge: the stream then ends in the error
            // event, without [DONE] and without the usage chunk's completion.
            assert.ok(stream, 'a whole answer is never sent uncharged');
            assert.doesNotMatch(r.text, /\[DONE\]/);
            assert.match(r.text, /billing_unavailable/);
          } else {
            assertError(r, { status: 503, type: 'api_error', code: 'billing_unavailable' });
          }
        }
      } finally {
        store.restart();
      }
      // The writer connects again on its next batch.
      const again = await waitFor(async () => {
        const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: bearer(key) });
        return r.status === 200 ? r : null;
      }, 10_000, 250);
      assertCompletion(again);
      const rows = await spend('outage');
      assert.equal(rows.length, 2, 'the two answers given, and only they, are charged');
      assert.equal((await settledTeam('outage')).balance, 0.99996);
      assert.match(gw.stderr, /the ledger could not commit/);
    });

    test('the billing commands: csv, summaries and their errors', async () => {
      const csv = (await ok('spend', 'list', '--team', 'acme', '--csv')).stdout.trim().split('\n');
      assert.match(csv[0], /^request_id,created_at,team,key,/);
      assert.equal(csv.length, 3);
      assert.match(csv[1], /"mock_model"/);
      const days = JSON.parse((await ok('spend', 'summary', '--team', 'acme', '--by', 'day', '--json')).stdout);
      assert.equal(days.length, 1);
      assert.equal(days[0].requests, 2);
      assert.equal((await admin('teams', 'topup', 'acme', '-5')).code, 1);
      assert.equal((await admin('teams', 'topup', 'acme', '0.0000000000001')).code, 1);
      assert.equal((await admin('teams', 'topup', 'nobody', '5')).code, 1);
      assert.equal((await admin('teams', 'topup', 'acme', '9999999')).code, 1, 'a balance past the int64 range is refused');
      // Only what the message says ("such as 10 or 0.25"): no exponents, underscores or bare points.
      for (const amount of ['1e6', '1E2', '1_000', '.5', '5.', '+5', ' 5', '0x10']) {
        const r = await admin('teams', 'topup', 'acme', amount);
        assert.equal(r.code, 1, `topup ${amount}`);
        assert.match(r.stderr, /such as 10 or 0\.25/);
      }
      assert.equal((await admin('teams', 'create', 'exponent', '--balance', '1e6')).code, 1);
      assert.equal((await admin('spend', 'summary', '--team', 'acme', '--by', 'week')).code, 1);
      assert.equal((await admin('spend', 'list', '--team', 'acme', '--since', 'yesterday')).code, 1);
      assert.equal((await admin('spend', 'list', '--team', 'acme', '--tag', 'novalue')).code, 1);
      assert.equal((await admin('spend', 'list')).code, 2);
      assert.equal((await team('acme')).balance, 0.99996);
    });

    test('open mode bills open_team when it is set, and nothing when it is not', async () => {
      await ok('teams', 'create', 'public', '--balance', '1');
      const open = await startGateway({
        config: { ...config, gateway: { ...config.gateway, auth: 'open', open_team: 'public' } },
        env: store.env,
      });
      try {
        assertCompletion(await postJson(open.baseURL, '/v1/chat/completions', chatBody('hi'), {}));
      } finally {
        await open.stop();
      }
      const rows = await spend('public');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].key, null);
      assert.equal((await team('public')).balance, 0.99998);
      const free = await startGateway({ config: { ...config, gateway: { ...config.gateway, auth: 'open' } }, env: store.env });
      try {
        const r = await postJson(free.baseURL, '/v1/chat/completions', chatBody('hi'), {});
        assertCompletion(r);
        assert.equal(r.json.usage['tollgate::cost'], undefined);
      } finally {
        await free.stop();
      }
      assert.equal((await spend('public')).length, 1);
    });
  });
}
