// Idempotency-Key through HTTP, on every engine: a retry gets the first answer's bytes again
// (whole and streamed) and is billed once; another request under the same key is 422; a retry
// while the first runs is 409 with Retry-After; a failure releases the key; a client that leaves
// does not cancel the answer, which is charged and kept whole; ZDR answers are not kept, nor
// answers past the team's bound; a dryrun records nothing; a bad key is 400; a crash after the
// charge loses neither the charge nor the answer; records expire after the window.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, DEFAULT_TEXT, SLOW_CHUNKS } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError,
  openaiProvider, endpointModel, marker, waitFor, sleep,
} from '../fixtures/gateway.mjs';

const idem = (key, k) => ({ authorization: `Bearer ${key}`, 'idempotency-key': k });

for (const engine of ENGINES) {
  describe(`Idempotency-Key on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;
    let key;
    const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const upstreamCalls = (m) => mock.requests.filter((r) => r.rawBody.includes(m)).length;
    const chat = (content, k, extra = {}, model = 'kept_model') =>
      postJson(gw.baseURL, '/v1/chat/completions', chatBody(content, extra, model), { headers: idem(key, k) });

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = standardConfig(mock.url, dead, {
        gateway: { auth: 'required' },
        models: {
          kept_model: {
            input_cost_per_token: 0.000001,
            output_cost_per_token: 0.000002,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url, { total_timeout_ms: 20000 }) },
          },
          embed_model: endpointModel('embedding', mock.url, 'embed-upstream', { input_cost_per_token: 0.000001 }),
        },
      });
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
      key = await keyFor('idem', '10');
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    /** The spend rows of requests whose id is in `ids`. */
    const rowsFor = async (ids) => (await spend('idem')).filter((r) => ids.includes(r.request_id));
    const balance = async () => JSON.parse((await ok('teams', 'show', 'idem', '--json')).stdout).balance;

    test('a retry gets the same bytes, one upstream call, one charge', async () => {
      const m = marker('whole');
      const k = `key-${m}`;
      const before = await balance();
      const first = await chat(m, k);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const second = await chat(m, k);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.text, first.text);
      assert.equal(upstreamCalls(m), 1);
      const rows = await rowsFor([first.headers.get('x-request-id'), second.headers.get('x-request-id')]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].cost, 0.00002);
      await waitFor(async () => Math.abs((before - await balance()) - 0.00002) < 1e-12 || null, 5000, 100);
    });

    test('a streamed answer is replayed as the same stream', async () => {
      const m = marker('stream');
      const k = `key-${m}`;
      const first = await chat(m, k, { stream: true, stream_options: { include_usage: true } });
      assert.equal(first.status, 200);
      assert.ok(first.text.endsWith('data: [DONE]\n\n'));
      const second = await chat(m, k, { stream: true, stream_options: { include_usage: true } });
      assert.match(second.headers.get('content-type'), /^text\/event-stream/);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.text, first.text);
      assert.equal(upstreamCalls(m), 1);
    });

    test('the same key with another request is 422, whatever its JSON formatting', async () => {
      const m = marker('mismatch');
      const k = `key-${m}`;
      await chat(m, k, { temperature: 1 });
      // The same request written differently is the same request.
      const same = await postJson(gw.baseURL, '/v1/chat/completions',
        `{ "temperature": 1.0, "messages": [{"content": "${m}", "role": "user"}], "model": "kept_model" }`,
        { headers: idem(key, k) });
      assert.equal(same.headers.get('idempotent-replayed'), 'true', same.text);
      const other = await chat(m, k, { temperature: 0.5 });
      assertError(other, { status: 422, code: 'idempotency_key_reused', param: 'Idempotency-Key' });
      // Keys are the team's: another team's same key is a new request.
      const otherKey = await keyFor('idem-other', '1');
      const elsewhere = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(m, { temperature: 0.5 }, 'kept_model'),
        { headers: idem(otherKey, k) });
      assert.equal(elsewhere.status, 200);
      assert.equal(upstreamCalls(m), 2);
    });

    test('a retry while the first is answered is 409 with Retry-After, then gets the answer', async () => {
      const m = marker('busy');
      const k = `key-${m}`;
      const first = chat(`${m} mock:slow=800`, k);
      await waitFor(() => upstreamCalls(m) === 1, 3000, 10);
      const busy = await chat(`${m} mock:slow=800`, k);
      assertError(busy, { status: 409, code: 'idempotency_key_in_use' });
      assert.equal(busy.headers.get('retry-after'), '1');
      const done = await first;
      assert.equal(done.status, 200);
      const again = await chat(`${m} mock:slow=800`, k);
      assert.equal(again.text, done.text);
      assert.equal(upstreamCalls(m), 1);
    });

    test('a failure releases the key: the retry is a fresh try', async () => {
      const m = marker('fail');
      const k = `key-${m}`;
      const a = await chat(`${m} mock:status=400`, k);
      assertError(a, { status: 400 });
      const b = await chat(`${m} mock:status=400`, k);
      assertError(b, { status: 400 });
      assert.equal(b.headers.get('idempotent-replayed'), null);
      assert.equal(upstreamCalls(m), 2);
    });

    test('a client that leaves does not cancel the answer: it is charged whole and replayed', async () => {
      const m = marker('left');
      const k = `key-${m}`;
      const body = JSON.stringify(chatBody(`${m} mock:stream-slow=20`, { stream: true }, 'kept_model'));
      let requestId;
      await new Promise((resolve, reject) => {
        const req = http.request(`${gw.baseURL}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', ...idem(key, k) },
        }, (res) => {
          requestId = res.headers['x-request-id'];
          res.once('data', () => { req.destroy(); resolve(); });
        });
        req.on('error', () => resolve());
        req.end(body);
        setTimeout(() => reject(new Error('no first byte')), 5000);
      });
      // The answer runs to its end meanwhile; then the retry gets it whole.
      const replay = await waitFor(async () => {
        const r = await chat(`${m} mock:stream-slow=20`, k, { stream: true });
        return r.status === 200 ? r : null;
      }, 8000, 100);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      const pieces = replay.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
      assert.equal(pieces.filter((c) => c.choices?.[0]?.delta?.content).length, SLOW_CHUNKS);
      assert.ok(replay.text.endsWith('data: [DONE]\n\n'));
      assert.equal(upstreamCalls(m), 1);
      // Charged as a complete answer, not as one its client left.
      const [row] = await rowsFor([requestId]);
      assert.equal(row.status, 200);
      assert.equal(row.estimated, false);
    });

    test('a ZDR model\'s answer is not kept: the retry is told it was delivered and billed once', async () => {
      const m = marker('zdr');
      const k = `key-${m}`;
      const first = await chat(m, k, {}, 'mock_model');
      assert.equal(first.status, 200);
      const second = await chat(m, k, {}, 'mock_model');
      assertError(second, { status: 410, code: 'idempotent_answer_not_kept' });
      assert.match(second.json.error.message, new RegExp(first.headers.get('x-request-id')));
      assert.equal(upstreamCalls(m), 1);
    });

    test('a dryrun records nothing', async () => {
      const m = marker('dry');
      const k = `key-${m}`;
      await chat(m, k, { 'tollgate::dryrun': true });
      const again = await chat(m, k, { 'tollgate::dryrun': true });
      assert.equal(again.headers.get('idempotent-replayed'), null);
      assert.equal(upstreamCalls(m), 2);
    });

    test('embeddings take the key too', async () => {
      const m = marker('emb');
      const k = `key-${m}`;
      const body = { model: 'tollgate::embedding_model_name::embed_model', input: [m] };
      const a = await postJson(gw.baseURL, '/v1/embeddings', body, { headers: idem(key, k) });
      assert.equal(a.status, 200, a.text);
      const b = await postJson(gw.baseURL, '/v1/embeddings', body, { headers: idem(key, k) });
      assert.equal(b.text, a.text);
      assert.equal(b.headers.get('idempotent-replayed'), 'true');
      assert.equal(upstreamCalls(m), 1);
    });

    test('a key longer than 255 characters, or not printable ASCII, is 400', async () => {
      const long = await chat('x', 'k'.repeat(256));
      assertError(long, { status: 400, code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
      const accented = await chat('x', 'caf\u00e9');
      assertError(accented, { status: 400, code: 'invalid_idempotency_key' });
      const max = await chat(marker('max'), 'k'.repeat(255));
      assert.equal(max.status, 200);
    });

    test('a crash after the charge loses neither: the retry gets the answer, charged once', async () => {
      const m = marker('crash');
      const k = `key-${m}`;
      // The client leaves at once; the gateway answers, charges and records, then is killed.
      const body = JSON.stringify(chatBody(m, {}, 'kept_model'));
      await new Promise((resolve) => {
        const req = http.request(`${gw.baseURL}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', ...idem(key, k) },
        });
        req.on('error', () => resolve());
        req.on('response', (res) => { res.resume(); res.on('end', resolve); });
        req.end(body);
      });
      await waitFor(async () => (await spend('idem')).some((r) => r.status === 200) || null, 5000, 50);
      await gw.kill();
      gw = await startGateway({ config, env: store.env });
      const retry = await chat(m, k);
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry.json.choices[0].message.content, DEFAULT_TEXT);
      assert.equal(upstreamCalls(m), 1);
    });

    test('a claim left running by a gateway that died is taken over by the retry', async () => {
      const m = marker('dead-claim');
      const k = `key-${m}`;
      const pending = chat(`${m} mock:slow=1500`, k).catch(() => null);
      await waitFor(() => upstreamCalls(m) === 1, 3000, 10);
      await gw.kill();
      await pending;
      gw = await startGateway({ config, env: store.env });
      // Not 409: the claim's gateway is gone, so the retry is a fresh try.
      const retry = await chat(`${m} mock:slow=1500`, k);
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers.get('idempotent-replayed'), null);
      assert.equal(upstreamCalls(m), 2);
    });

    test('past [cache] team_max_bytes a team\'s answers are not kept: their retries get 410, charged once', async () => {
      const kMaxBytes = 1000;
      const bounded = await startGateway({
        config: { ...config, cache: { team_max_bytes: kMaxBytes } }, env: store.env,
      });
      try {
        const own = await keyFor('idem-bound', '10');
        const m = marker('bound');
        // Whole and streamed answers of a few hundred bytes each, under keys of their own.
        const send = (i) => postJson(bounded.baseURL, '/v1/chat/completions',
          chatBody(`${m}-${i}`, i % 2 ? { stream: true } : {}, 'kept_model'), { headers: idem(own, `key-${m}-${i}`) });
        const firsts = [];
        for (let i = 0; i < 6; i += 1) {
          const r = await send(i);
          assert.equal(r.status, 200, r.text);
          firsts.push(r);
        }
        // Each answer is kept if it fits beside those kept before it.
        let kept = 0;
        let keptBytes = 0;
        for (let i = 0; i < firsts.length; i += 1) {
          const bytes = Buffer.byteLength(firsts[i].text);
          const fits = keptBytes + bytes <= kMaxBytes;
          const retry = await send(i);
          if (fits) {
            assert.equal(retry.status, 200, `answer ${i} (${bytes} bytes after ${keptBytes}): ${retry.text}`);
            assert.equal(retry.headers.get('idempotent-replayed'), 'true');
            assert.equal(retry.text, firsts[i].text);
            kept += 1;
            keptBytes += bytes;
          } else {
            assertError(retry, { status: 410, code: 'idempotent_answer_not_kept', param: 'Idempotency-Key' });
            assert.match(retry.json.error.message, new RegExp(firsts[i].headers.get('x-request-id')));
          }
        }
        assert.ok(kept >= 1 && kept < firsts.length, `${kept} of ${firsts.length} kept`);
        for (let i = 0; i < firsts.length; i += 1) assert.equal(upstreamCalls(`${m}-${i}`), 1);
        // Each charged once, the retries never.
        const ids = firsts.map((r) => r.headers.get('x-request-id'));
        const rows = (await spend('idem-bound'));
        assert.equal(rows.length, firsts.length);
        assert.deepEqual(rows.map((r) => r.request_id).sort(), [...ids].sort());
      } finally {
        await bounded.stop();
      }
    });

    test('two gateways completing a team\'s answers at once pass its bound by one answer at most', async () => {
      const kMaxBytes = 2000;
      const bounded = { ...config, cache: { team_max_bytes: kMaxBytes } };
      const gateways = [await startGateway({ config: bounded, env: store.env })];
      try {
        gateways.push(await startGateway({ config: bounded, env: store.env }));
        const own = await keyFor('idem-race', '10');
        const m = marker('race');
        const send = (i) => postJson(gateways[i % 2].baseURL, '/v1/chat/completions',
          chatBody(`${m}-${i}`, {}, 'kept_model'), { headers: idem(own, `key-${m}-${i}`) });
        const n = 24;
        const firsts = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
        for (const r of firsts) assert.equal(r.status, 200, r.text);
        const largest = Math.max(...firsts.map((r) => Buffer.byteLength(r.text)));
        // The team's sum is exactly what its records keep, and within the bound but for one
        // answer of the other gateway.
        const [sum, kept] = store.sql(
          "SELECT b.bytes, (SELECT SUM(k.bytes) FROM idempotency_keys k WHERE k.team_id = b.team_id) " +
          "FROM idempotency_bytes b JOIN teams t ON t.id = b.team_id WHERE t.name = 'idem-race'",
        ).trim().split('|').map(Number);
        assert.equal(sum, kept);
        assert.ok(sum > 0 && sum <= kMaxBytes + largest, `${sum} bytes kept`);
        // The retries: the kept ones replayed, the others 410; none charged.
        let replayed = 0;
        for (let i = 0; i < n; i += 1) {
          const retry = await send(i);
          if (retry.status === 200) {
            assert.equal(retry.text, firsts[i].text);
            replayed += Buffer.byteLength(retry.text);
          } else {
            assertError(retry, { status: 410, code: 'idempotent_answer_not_kept' });
          }
        }
        assert.equal(replayed, sum);
        assert.equal((await spend('idem-race')).length, n);
      } finally {
        await Promise.all(gateways.map((g) => g.stop()));
      }
    });

    test('a record is forgotten after the window', async () => {
      const short = await startGateway({
        config: { ...config, cache: { idempotency_window_seconds: 1 } }, env: store.env,
      });
      try {
        const m = marker('window');
        const k = `key-${m}`;
        const send = () => postJson(short.baseURL, '/v1/chat/completions', chatBody(m, {}, 'kept_model'), { headers: idem(key, k) });
        await send();
        assert.equal((await send()).headers.get('idempotent-replayed'), 'true');
        await sleep(1100);
        const later = await send();
        assert.equal(later.status, 200);
        assert.equal(later.headers.get('idempotent-replayed'), null);
        assert.equal(upstreamCalls(m), 2);
      } finally {
        await short.stop();
      }
    });
  });
}
