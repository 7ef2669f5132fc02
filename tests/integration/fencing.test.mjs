// Fencing (docs/operating.md): once a control-plane change has returned, no gateway serves a
// request against the state before it. Two gateways on one store with a 500 ms lease; one is
// stopped (SIGSTOP) mid-stream, with an answer in its cache and one kept for an Idempotency-Key.
// A key revoked meanwhile returns once the stopped gateway has been silent past its lease and a
// second more, naming it fenced; resumed, that gateway answers nothing for the revoked key (not
// from its cache, not as a replay, not by a new upstream call: 401 once caught up, 503
// gateway_fenced before), and its stream ends with a gateway_fenced error event, relaying nothing
// more, its spend row written. SQLite in the `kill-loops` tier, PostgreSQL in the `postgres` one.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { stopHoldingNoLock } from '../fixtures/stall.mjs';
import { skipTier } from '../fixtures/tiers.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, chatBody, adminOf, waitFor, readSSE,
  sleep, assertError,
} from '../fixtures/gateway.mjs';

const MODEL = 'fenced';
const LEASE_MS = 500;
const CACHED = { 'tollgate::cache_options': { enabled: 'on' } };

/** A refusal the revoked key may get from the resumed gateway: fenced, or revoked once caught up. */
function assertRefusedForRevokedKey(r, what) {
  const ctx = `${what}: ${r.status} ${r.text}`;
  assert.ok([401, 503].includes(r.status), ctx);
  assert.equal(r.json?.error?.code, r.status === 401 ? 'revoked_api_key' : 'gateway_fenced', ctx);
  if (r.status === 503) assert.equal(r.headers.get('retry-after'), '1', ctx);
}

for (const engine of ENGINES) {
  const skip = engine.skip || (engine.name === 'sqlite' ? skipTier('kill-loops') : false);
  describe(`a stopped gateway is fenced, on ${engine.name}`, { skip }, () => {
    let mock;
    let store;
    let stopped;
    let other;
    const { ok, keyFor, spend, admin } = adminOf(() => ({ configPath: other.configPath, env: store.env }));

    before(async () => {
      mock = await startMock();
      store = await engine.start();
      const config = {
        gateway: { ...GATEWAY_DEFAULTS, auth: 'required', lease_ms: LEASE_MS },
        storage: store.storage,
        models: {
          [MODEL]: {
            input_cost_per_token: 0,
            output_cost_per_token: 0.000001,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url) },
          },
        },
      };
      stopped = await startGateway({ config, env: store.env });
      other = await startGateway({ config, env: store.env });
    });

    after(async () => {
      if (stopped) process.kill(stopped.pid, 'SIGCONT');
      await stopped?.stop();
      await other?.stop();
      await mock?.close();
      store?.stop();
    });

    test('a revocation returns past its lease, and the resumed gateway serves nothing from before it', { timeout: 60_000 }, async () => {
      const key = await keyFor('fence', '10');
      const publicId = key.split('-')[2];
      const auth = { authorization: `Bearer ${key}` };
      const post = (gw, body, headers = {}) => postJson(gw.baseURL, '/v1/chat/completions', body, { headers: { ...auth, ...headers } });
      // The setup's first answer. Its lease is 500 ms: on a machine saturated by the rest of the
      // suite, a gateway can miss a renewal before the scenario starts, and is then fenced until
      // the next one (503 gateway_fenced), as it should be. The setup waits that out, bounded.
      const first = async (body) => {
        let r;
        for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
          r = await post(stopped, body);
          if (r.status !== 503 || r.json?.error?.code !== 'gateway_fenced') break;
        }
        return r;
      };
      // What it will be asked again: an answer in its cache, one kept for an Idempotency-Key.
      const cachedBody = chatBody('cache me', CACHED, MODEL);
      const primed = await first(cachedBody);
      assert.equal(primed.status, 200, primed.text);
      const hit = await post(stopped, cachedBody);
      assert.equal(hit.headers.get('tollgate-cache'), 'hit');
      const idem = { 'idempotency-key': `fence-${process.pid}` };
      const keptBody = chatBody('keep me', {}, MODEL);
      assert.equal((await post(stopped, keptBody, idem)).status, 200);
      assert.equal((await post(stopped, keptBody, idem)).headers.get('idempotent-replayed'), 'true');

      // A stream in flight: twenty pieces, one every 300 ms.
      const res = await fetch(`${stopped.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify(chatBody('mock:stream-slow=300', { stream: true }, MODEL)),
      });
      assert.equal(res.status, 200);
      const streamId = res.headers.get('x-request-id');
      const seen = [];
      const streamed = readSSE(res, { onEvent: (ev) => { seen.push(ev); } });
      await waitFor(() => seen.length >= 2, 5_000, 10);

      await stopHoldingNoLock(stopped.pid, store);
      const stoppedAt = Date.now();
      // Requests that reach it while it is stopped wait in its listen queue.
      const asked = mock.requests.length;
      const queued = [
        post(stopped, cachedBody).then((r) => ['a cache hit', r]),
        post(stopped, keptBody, idem).then((r) => ['a replay', r]),
        post(stopped, chatBody('a new call', {}, MODEL)).then((r) => ['a new upstream call', r]),
      ];

      // The revocation waits for the stopped gateway until its lease has run out, then names it.
      const revoked = await admin('keys', 'revoke', publicId);
      const returnedAfter = Date.now() - stoppedAt;
      assert.equal(revoked.code, 0, revoked.stderr);
      const named = new RegExp(`warning: gateway \\S+ \\(host [^,]+, pid ${stopped.pid}, last seen [^)]+\\) is fenced`);
      assert.match(revoked.stderr, named);
      assert.doesNotMatch(revoked.stderr, new RegExp(`pid ${other.pid}\\b`), 'the running gateway confirmed it');
      assert.ok(returnedAfter < 8_000, `the revocation returned ${returnedAfter} ms after the stop`);
      const other401 = await post(other, chatBody('hi', {}, MODEL));
      assert.equal(other401.status, 401, other401.text);

      await sleep(200); // The queued requests have reached its listen queue.
      const relayedBeforeResume = seen.length;
      process.kill(stopped.pid, 'SIGCONT');

      for (const [what, r] of await Promise.all(queued)) assertRefusedForRevokedKey(r, what);
      assert.equal(mock.requests.length, asked, 'nothing went upstream for the revoked key');

      // The stream relays nothing more: one error event, no [DONE].
      const sse = await streamed;
      assert.equal(sse.done, false);
      assert.equal(sse.error?.code, 'gateway_fenced', JSON.stringify(sse.events.slice(-2)));
      assert.equal(seen.length, relayedBeforeResume + 1, 'only the error event came after the resume');
      // ...and what it relayed is charged, in a spend row.
      const row = await waitFor(async () => (await spend('fence')).find((r) => r.request_id === streamId), 10_000, 100);
      assert.equal(row.status, 503, JSON.stringify(row));
      assert.equal(row.streamed, true);
      assert.ok(row.cost > 0, JSON.stringify(row));

      // Caught up, it refuses the key as revoked, and serves the others.
      await waitFor(async () => (await post(stopped, chatBody('hi', {}, MODEL))).status === 401, 10_000, 50);
      const fresh = (await ok('keys', 'create', '--team', 'fence', '--name', 'after')).stdout.trim();
      const served = await postJson(stopped.baseURL, '/v1/chat/completions', chatBody('hi', {}, MODEL), { headers: { authorization: `Bearer ${fresh}` } });
      assert.equal(served.status, 200, served.text);
    });
  });
}

// The other side of the lease: a gateway busy at saturation, its store's writer never idle and
// keys made meanwhile (each a reload of its key table), is never fenced.
for (const engine of ENGINES) {
  const skip = engine.skip || (engine.name === 'sqlite' ? skipTier('kill-loops') : false);
  describe(`a gateway at saturation is never fenced, on ${engine.name}`, { skip }, () => {
    test('64 clients of billed requests for 8 s, keys made meanwhile: every answer 200', { timeout: 60_000 }, async () => {
      const mock = await startMock();
      const store = await engine.start();
      let gw;
      try {
        const config = {
          gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
          storage: store.storage,
          models: {
            [MODEL]: {
              input_cost_per_token: 0.000001,
              output_cost_per_token: 0.000001,
              routing: ['primary'],
              providers: { primary: openaiProvider(mock.url) },
            },
          },
        };
        gw = await startGateway({ config, env: store.env });
        const { ok, keyFor } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
        const key = await keyFor('busy', '1000');
        const statuses = new Map();
        let ready503 = 0;
        const until = Date.now() + 8_000;
        const client = async () => {
          while (Date.now() < until) {
            const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, MODEL), { headers: { authorization: `Bearer ${key}` } });
            const k = r.status === 200 ? 200 : `${r.status} ${r.json?.error?.code}`;
            statuses.set(k, (statuses.get(k) ?? 0) + 1);
          }
        };
        const probe = async () => {
          while (Date.now() < until) {
            const r = await fetch(`${gw.baseURL}/ready`);
            await r.arrayBuffer();
            if (r.status !== 200) ready503 += 1;
            await sleep(50);
          }
        };
        const changes = async () => {
          for (let i = 0; Date.now() < until - 1_000; ++i) {
            await ok('keys', 'create', '--team', 'busy', '--name', `meanwhile-${i}`);
            await sleep(1_000);
          }
        };
        await Promise.all([...Array.from({ length: 64 }, client), probe(), changes()]);
        assert.deepEqual([...statuses.keys()], [200], JSON.stringify([...statuses]));
        assert.ok(statuses.get(200) > 100, `only ${statuses.get(200)} requests were answered`);
        assert.equal(ready503, 0, '/ready said the gateway was fenced');
      } finally {
        await gw?.stop();
        await mock.close();
        store.stop();
      }
    });
  });
}

// A narrowed key is a control-plane change as a revocation is (docs/keys-and-teams.md): `keys
// update --allowed-models` returns once the stopped gateway has been silent past its lease,
// naming it fenced; the running gateway refuses the key at once (403 model_not_allowed), and the
// resumed one answers nothing queued against the key's old rules (503 gateway_fenced before it
// has caught up, 403 model_not_allowed after), sending nothing upstream.
for (const engine of ENGINES) {
  const skip = engine.skip || (engine.name === 'sqlite' ? skipTier('kill-loops') : false);
  describe(`a narrowed key is narrowed on a stopped gateway, on ${engine.name}`, { skip }, () => {
    test('keys update --allowed-models returns past its lease; nothing queued to the stopped gateway goes upstream', { timeout: 60_000 }, async () => {
      const mock = await startMock();
      const store = await engine.start();
      let stopped;
      let other;
      let resumed = false;
      try {
        const model = { input_cost_per_token: 0, output_cost_per_token: 0.000001, routing: ['primary'], providers: { primary: openaiProvider(mock.url) } };
        const config = {
          gateway: { ...GATEWAY_DEFAULTS, auth: 'required', lease_ms: LEASE_MS },
          storage: store.storage,
          models: { [MODEL]: model, other: model },
        };
        stopped = await startGateway({ config, env: store.env });
        other = await startGateway({ config, env: store.env });
        const { keyFor, admin } = adminOf(() => ({ configPath: other.configPath, env: store.env }));
        const key = await keyFor('narrow', '10');
        const publicId = key.split('-')[2];
        const post = (gw, content) => postJson(gw.baseURL, '/v1/chat/completions', chatBody(content, {}, MODEL), { headers: { authorization: `Bearer ${key}` } });
        for (const gw of [stopped, other]) assert.equal((await post(gw, 'before')).status, 200);

        await stopHoldingNoLock(stopped.pid, store);
        const stoppedAt = Date.now();
        const asked = mock.requests.length;
        const queued = ['queued one', 'queued two', 'queued three'].map((c) => post(stopped, c));

        const narrowed = await admin('keys', 'update', publicId, '--allowed-models', 'other');
        const returnedAfter = Date.now() - stoppedAt;
        assert.equal(narrowed.code, 0, narrowed.stderr);
        assert.match(narrowed.stderr, new RegExp(`warning: gateway \\S+ \\(host [^,]+, pid ${stopped.pid}, last seen [^)]+\\) is fenced`));
        assert.doesNotMatch(narrowed.stderr, new RegExp(`pid ${other.pid}\\b`), 'the running gateway confirmed it');
        assert.ok(returnedAfter >= LEASE_MS, `the update returned ${returnedAfter} ms after the stop, within the lease`);
        assert.ok(returnedAfter < 8_000, `the update returned ${returnedAfter} ms after the stop`);
        const refused = await post(other, 'after');
        assertError(refused, { status: 403, code: 'model_not_allowed' });

        await sleep(200); // The queued requests have reached its listen queue.
        process.kill(stopped.pid, 'SIGCONT');
        resumed = true;
        for (const r of await Promise.all(queued)) {
          const ctx = `${r.status} ${r.text}`;
          assert.ok([403, 503].includes(r.status), ctx);
          assert.equal(r.json?.error?.code, r.status === 403 ? 'model_not_allowed' : 'gateway_fenced', ctx);
        }
        assert.equal(mock.requests.length, asked, 'nothing went upstream against the old rules');
        // Caught up, it refuses the old model and serves the one still allowed.
        await waitFor(async () => (await post(stopped, 'caught up')).status === 403, 10_000, 50);
        const allowed = await postJson(stopped.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'other'), { headers: { authorization: `Bearer ${key}` } });
        assert.equal(allowed.status, 200, allowed.text);
      } finally {
        if (stopped && !resumed) process.kill(stopped.pid, 'SIGCONT');
        await stopped?.stop();
        await other?.stop();
        await mock.close();
        store.stop();
      }
    });
  });
}
