// Rate limits fail closed when the store is unreachable (docs/limits.md, "Across gateways"): a
// gateway admits from the share it holds, and once that is used up a request against a configured
// limit is refused with 503 limits_unavailable and Retry-After, sent nowhere; when the store is
// back, requests are admitted again. A database server can go away, a SQLite file cannot: this
// runs on PostgreSQL only (the `postgres` tier), with the longest lease, so that the gateway is
// not fenced while its shares run out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, postJson, chatBody, assertError, marker, waitFor,
} from '../fixtures/gateway.mjs';

const engine = ENGINES.find((e) => e.name === 'postgres');
const RPM = 40; // One gateway: shares of at most 40 / 4 = 10.

test('with the store down, a limit whose share is used up is 503 limits_unavailable, nothing sent upstream; admitted again once it is back',
  { skip: engine.skip, timeout: 60_000 }, async () => {
    const store = await engine.start();
    const mock = await startMock();
    let gw;
    let halted = false;
    try {
      const config = unpriced(standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`,
        { gateway: { auth: 'required', lease_ms: 8000 } }));
      config.limits = { key: { rpm: RPM } };
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
      const { ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
      await ok('teams', 'create', 'down', '--balance', '10');
      const key = (await ok('keys', 'create', '--team', 'down', '--name', 'k')).stdout.trim();
      const chat = (m) => postJson(gw.baseURL, '/v1/chat/completions', chatBody(m, {}, 'mock_model'), { headers: { authorization: `Bearer ${key}` } });
      const first = await chat(marker('before'));
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-ratelimit-limit-requests'), String(RPM));

      store.halt();
      halted = true;
      // What is left of the share it holds (if it still holds one) is admitted, then no more. An
      // admitted request goes upstream, but its answer is withheld: its charge (of nothing) cannot
      // be recorded (503 billing_unavailable, billing.test.mjs).
      let admitted = 0;
      let refused = null;
      let m;
      const asked = mock.requests.length;
      for (let i = 0; i < RPM && !refused; i += 1) {
        m = marker('down');
        const r = await chat(m);
        if (r.json?.error?.code === 'limits_unavailable') refused = r;
        else {
          assert.ok(r.status === 200 || r.json?.error?.code === 'billing_unavailable', `${r.status} ${r.text}`);
          admitted += 1;
        }
      }
      assert.ok(refused, `${admitted} requests admitted with the store down`);
      assert.ok(admitted < RPM / 4, `${admitted} admitted: more than one share`);
      assertError(refused, { status: 503, type: 'api_error', code: 'limits_unavailable' });
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(refused.json.error.message, /cannot reach its store/);
      assert.equal(mock.requests.filter((r) => r.rawBody.includes(m)).length, 0, 'the refused request went upstream');
      assert.equal(mock.requests.length, asked + admitted, 'only the admitted requests went upstream');
      // Another, while it is still within its lease: refused the same way.
      const again = await chat(marker('again'));
      assertError(again, { status: 503, type: 'api_error', code: 'limits_unavailable' });
      assert.equal(mock.requests.length, asked + admitted);

      store.restart();
      halted = false;
      const back = await waitFor(async () => {
        const r = await chat(marker('back'));
        return r.status === 200 ? r : null;
      }, 15_000, 250);
      assert.equal(back.headers.get('x-ratelimit-limit-requests'), String(RPM));
    } finally {
      if (halted) store.restart();
      await gw?.stop();
      await mock.close();
      store.stop();
    }
  });
