// Balance alerts (docs/alerts.md) against the real binary, on every engine: a settlement that
// takes a team's balance below configured amounts writes one event per amount crossed, and a
// top-up above an amount re-arms it; a receiver that fails each event twice sees it signed,
// retried with a backoff and answered once; `tollgate admin alerts list` and the console show the
// deliveries; two gateways on one store deliver each event once between them; the URL and the
// secret never reach the gateway's output; an event not yet delivered when every gateway stops
// is delivered by the next one to start.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, waitFor,
} from '../fixtures/gateway.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';

const SECRET_ENV = 'TOLLGATE_TEST_WEBHOOK_SECRET';
const SECRET = 'whsec_test_0123456789abcdef0123456789';
// A mock chat request costs 12 x 0.000001 + 4 x 0.000002 = 0.00002 USD; a balance of 1 USD goes
// 0.99998, 0.99996, 0.99994, ...: the first request crosses the two upper amounts at once.
const THRESHOLDS = [0.999995, 0.99999, 0.99997];
const bearer = (key) => ({ authorization: `Bearer ${key}` });

/**
 * A webhook receiver on 127.0.0.1:0 that answers 500 to an event's first `failures` deliveries
 * and 200 after (503 to all while `down` is set); it keeps every delivery: {id, body, signature,
 * at, ok, path}.
 */
async function startReceiver({ failures = 2 } = {}) {
  const deliveries = [];
  const state = { down: false };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const id = JSON.parse(body).id;
      const ok = !state.down && deliveries.filter((d) => d.id === id).length >= failures;
      deliveries.push({ id, body, signature: req.headers['tollgate-signature'], at: Date.now(), ok, path: req.url });
      res.writeHead(ok ? 200 : state.down ? 503 : 500, { 'content-type': 'text/plain' });
      res.end(ok ? 'thanks' : 'not now');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks/tollgate`,
    deliveries,
    set down(v) { state.down = v; },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Checks `d`'s signature as a receiver should: HMAC-SHA256 of "<t>.<body>", t recent. */
function assertSigned(d) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(d.signature ?? '');
  assert.ok(m, `signature header: ${d.signature}`);
  const t = Number(m[1]);
  assert.ok(Math.abs(d.at / 1000 - t) < 300, 'signed within five minutes of its arrival');
  const expected = crypto.createHmac('sha256', SECRET).update(`${m[1]}.${d.body}`).digest('hex');
  assert.ok(crypto.timingSafeEqual(Buffer.from(m[2], 'hex'), Buffer.from(expected, 'hex')), 'signature matches');
}

for (const engine of ENGINES) {
  describe(`balance alerts on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let receiver;
    let gw;
    let other;
    let config;
    let env;
    const { ok, keyFor } = adminOf(() => ({ configPath: gw.configPath, env: { ...store.env, [SECRET_ENV]: SECRET } }));

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      receiver = await startReceiver();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
      config.storage = store.storage;
      config.console = { owner_email: 'founder@alerts.test' };
      config.alerts = {
        webhook_url: receiver.url,
        webhook_secret: `env::${SECRET_ENV}`,
        balance_below_usd: THRESHOLDS,
        key_budget_fractions: [0.01, 0.02],
      };
      env = { ...store.env, [SECRET_ENV]: SECRET };
      gw = await startGateway({ config, env });
      // A second gateway on the same store: between them, each event is delivered once.
      other = await startGateway({ config, env });
    });

    after(async () => {
      await other?.stop();
      await gw?.stop();
      await receiver?.close();
      await mock?.close();
      store?.stop();
    });

    const chat = async (via, key) => {
      const r = await postJson(via.baseURL, '/v1/chat/completions', chatBody('hi', { max_tokens: 8 }), { headers: bearer(key) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.usage['tollgate::cost'], 0.00002);
    };
    const alerts = async (...flags) => JSON.parse((await ok('alerts', 'list', '--json', ...flags)).stdout);

    test('crossings fire once each, re-arm on a top-up, and are delivered signed, retried, once', async () => {
      const key = await keyFor('lowbal', '1');
      await ok('teams', 'create', 'quiet', '--balance', '5');
      const quietKey = (await ok('keys', 'create', '--team', 'quiet', '--name', 'k')).stdout.trim();
      await chat(gw, quietKey);  // Far above every amount: nothing fires.

      await chat(gw, key);     // 1 -> 0.99998: below 0.999995 and 0.99999.
      await chat(other, key);  // 0.99996: below 0.99997.
      await chat(gw, key);     // 0.99994: below all already.
      await waitFor(async () => (await alerts('--team', 'lowbal')).length === 3, 10_000, 100);
      await ok('teams', 'topup', 'lowbal', '0.0001');  // 1.00004: above every amount again.
      await chat(other, key);  // 1.00002
      await chat(gw, key);     // 1.0
      await chat(gw, key);     // 0.99998: below the upper two again.

      // Each event fails twice at the receiver, then is taken: three tries each, 1 s then 2 s apart.
      await waitFor(async () => {
        const listed = await alerts('--team', 'lowbal');
        return listed.length === 5 && listed.every((a) => a.state === 'delivered');
      }, 30_000, 200);
      const listed = await alerts('--team', 'lowbal');
      assert.deepEqual(listed.map((a) => a.threshold).sort(), [0.99997, 0.99999, 0.99999, 0.999995, 0.999995]);
      for (const a of listed) {
        assert.equal(a.type, 'balance.below');
        assert.equal(a.team, 'lowbal');
        assert.equal(a.attempts, 3);
        assert.equal(a.last_status, 200);
        assert.equal(a.next_attempt_at, null);
        assert.equal(a.failed_at, null);
      }
      assert.deepEqual(await alerts('--team', 'quiet'), []);

      const ids = new Set(listed.map((a) => a.id));
      assert.equal(ids.size, 5);
      for (const id of ids) {
        const tries = receiver.deliveries.filter((d) => d.id === id);
        assert.deepEqual(tries.map((d) => d.ok), [false, false, true], `three tries, one taken, of ${id}`);
        assert.ok(tries[1].at - tries[0].at >= 900, 'the first retry waits a second');
        assert.ok(tries[2].at - tries[1].at >= 1900, 'the second two');
        assert.ok(tries.every((d) => d.body === tries[0].body), 'the same body on every try');
        tries.forEach(assertSigned);
        assert.equal(tries[0].path, '/hooks/tollgate');
      }
      const first = JSON.parse(receiver.deliveries.find((d) => d.ok).body);
      assert.deepEqual(Object.keys(first).sort(), ['balance_usd', 'created_at', 'id', 'team', 'threshold', 'type']);
      assert.match(first.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const byThreshold = Object.fromEntries(listed.map((a) => [a.threshold, a.balance_usd]));
      assert.equal(byThreshold[0.99997], 0.99996);
      const bodies = receiver.deliveries.filter((d) => d.ok).map((d) => JSON.parse(d.body));
      assert.deepEqual(bodies.filter((b) => b.threshold === 0.999995).map((b) => b.balance_usd), [0.99998, 0.99998]);
    });

    test('the console shows a team\'s deliveries to its owners and admins only', async () => {
      const owner = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'owner@alerts.test')).stdout));
      const member = await consoleSession(gw).signIn(linkToken((await ok('login-link', 'member@alerts.test')).stdout));
      await ok('members', 'add', 'lowbal', 'owner@alerts.test', '--role', 'owner');
      await ok('members', 'add', 'lowbal', 'member@alerts.test', '--role', 'member');
      const T = `/console/api/teams/${await owner.teamId('lowbal')}`;
      const r = await owner.call('GET', `${T}/alerts?limit=2`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.data.length, 2);
      assert.equal(r.json.data[0].state, 'delivered');
      assert.deepEqual(r.json.data, (await alerts('--team', 'lowbal')).slice(0, 2));
      assert.equal((await member.call('GET', `${T}/alerts`)).status, 403);
      assert.equal((await owner.call('GET', `${T}/alerts?limit=0`)).status, 400);
    });

    test('the admin listing covers every team, as text too', async () => {
      const all = await alerts();
      assert.equal(all.length, 5);
      const text = (await ok('alerts', 'list')).stdout.trim().split('\n');
      assert.equal(text.length, 5);
      assert.match(text[0], /\tlowbal\tbalance\.below\tbelow 0\.\d+ USD\tbalance 0\.\d+ USD\tdelivered /);
    });

    test('neither the webhook\'s URL nor its secret reaches the output', () => {
      for (const g of [gw, other]) {
        const out = g.stdout + g.stderr;
        assert.ok(!out.includes(SECRET), 'no secret');
        assert.ok(!out.includes('/hooks/tollgate'), 'no URL path');
        assert.match(out, /alerts are sent to 127\.0\.0\.1/);
        assert.ok(!out.includes('not now') && !out.includes('thanks'), 'no answer body');
      }
    });

    // Last: it stops both gateways.
    test('an event not delivered when every gateway stops is delivered after a restart', async () => {
      receiver.down = true;
      const key = await keyFor('restarted', '1');
      await chat(gw, key);  // 1 -> 0.99998: two events, refused by the receiver for now.
      const pending = async () => (await alerts('--team', 'restarted')).filter((a) => a.attempts >= 1);
      await waitFor(async () => (await pending()).length === 2, 10_000, 100);
      await Promise.all([gw.stop(), other.stop()]);
      const stopped = await alerts('--team', 'restarted');
      assert.deepEqual(stopped.map((a) => a.state), ['pending', 'pending']);

      receiver.down = false;
      gw = await startGateway({ config, env });
      await waitFor(async () => (await alerts('--team', 'restarted')).every((a) => a.state === 'delivered'), 30_000, 200);
      for (const a of await alerts('--team', 'restarted')) {
        const tries = receiver.deliveries.filter((d) => d.id === a.id);
        assert.equal(tries.filter((d) => d.ok).length, 1, 'taken once');
        assert.equal(tries.length, a.attempts);
        tries.forEach(assertSigned);
      }
    });

    test("a key's spend crossing fractions of its budget fires once per fraction in a window", async () => {
      await ok('teams', 'create', 'budget-alerts', '--balance', '5');
      const key = (await ok('keys', 'create', '--team', 'budget-alerts', '--name', 'watched',
        '--budget-usd', '0.002', '--budget-window', 'month')).stdout.trim();
      const publicId = key.split('-')[2];
      // 0.00002 a request: the first reaches 0.01 of the budget, the second 0.02, later ones none.
      for (let i = 0; i < 4; i += 1) await chat(gw, key);  // The other gateway stopped above.
      const delivered = () => receiver.deliveries.filter((d) => d.ok && JSON.parse(d.body).key === publicId);
      await waitFor(async () => delivered().length === 2, 20_000, 100);
      const bodies = delivered().map((d) => JSON.parse(d.body)).sort((a, b) => a.threshold - b.threshold);
      assert.deepEqual(bodies.map(({ type, team, key: k, threshold, spend_usd: spend, budget_usd: budget }) =>
        ({ type, team, k, threshold, spend, budget })), [
        { type: 'key_budget.crossed', team: 'budget-alerts', k: publicId, threshold: 0.01, spend: 0.00002, budget: 0.002 },
        { type: 'key_budget.crossed', team: 'budget-alerts', k: publicId, threshold: 0.02, spend: 0.00004, budget: 0.002 },
      ]);
      for (const d of delivered()) assertSigned(d);
      assert.equal(delivered().length, 2);
      // The listings show what the receiver was sent: the fraction, the spend and the budget.
      const listed = (await alerts('--team', 'budget-alerts')).sort((x, y) => x.threshold - y.threshold);
      assert.deepEqual(listed.map(({ type, key: k, threshold, spend_usd: spend, budget_usd: budget, balance_usd: balance }) =>
        ({ type, k, threshold, spend, budget, balance })), [
        { type: 'key_budget.crossed', k: publicId, threshold: 0.01, spend: 0.00002, budget: 0.002, balance: undefined },
        { type: 'key_budget.crossed', k: publicId, threshold: 0.02, spend: 0.00004, budget: 0.002, balance: undefined },
      ]);
      const text = (await ok('alerts', 'list', '--team', 'budget-alerts')).stdout;
      assert.match(text, new RegExp(`key ${publicId} past 0\\.02 of 0\\.002 USD\tspent 0\\.00004 USD`));
    });
  });
}
