// A gateway that stalls (SIGSTOP) for longer than the store waits for its heartbeats is taken for
// dead: another gateway reclaims its holds, and the team's balance goes to the other's requests.
// When it resumes, its answers in flight find their holds gone, and the gateway fenced for them
// (its lease ran out while it was stopped): a complete answer is withheld (503 gateway_fenced,
// nothing charged); a stream whose client stayed ends with a gateway_fenced error event, relaying
// nothing more, and like one whose client left is charged what the balance covers with the rest
// recorded as uncollected; and the escrow it kept at hand is checked in the store before
// anything is admitted on it. The balance never goes below zero. On every
// engine (SQLite, and PostgreSQL in the `postgres` tier). About 20 s each: holds are reclaimed
// 10 s after a gateway's last heartbeat.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import { stopHoldingNoLock } from '../fixtures/stall.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, chatBody, adminOf, waitFor, assertError,
} from '../fixtures/gateway.mjs';

const PICO_PER_TOKEN = 1_000_000n; // 0.000001 USD a completion token; prompts are free
const BALANCE_TOKENS = 20_000n;
const MODEL = 'stall';

/**
 * Starts a stream; resolves {req, res, firstChunk, text(), ended} once the first event has
 * arrived: text() is all of the body received so far, `ended` resolves when the body ends.
 */
function startStream(baseURL, key, content) {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(baseURL + '/v1/chat/completions'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    }, (res) => {
      let text = '';
      const ended = new Promise((done) => { res.on('end', done); res.on('close', done); });
      res.on('data', (chunk) => {
        const first = text === '';
        text += chunk;
        if (first) resolve({ req, res, firstChunk: String(chunk), text: () => text, ended });
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end(JSON.stringify(chatBody(content, { stream: true, max_tokens: 100 }, MODEL)));
  });
}

for (const engine of ENGINES) describe(`a stalled gateway never overdraws, on ${engine.name}`, { skip: engine.skip }, () => {
  let mock;
  let store;
  let stalled;
  let other;
  let key;
  const { keyFor, spend } = adminOf(() => ({ configPath: other.configPath, env: store.env }));
  const team = () => store.sql("SELECT balance, reserved FROM teams WHERE name = 'stall'").trim().split('|').map(BigInt);
  const post = (gw, body) => postJson(gw.baseURL, '/v1/chat/completions', body, { headers: { authorization: `Bearer ${key}` } });

  before(async () => {
    mock = await startMock();
    store = await engine.start();
    const config = {
      gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
      storage: store.storage,
      models: {
        [MODEL]: {
          input_cost_per_token: 0,
          output_cost_per_token: 0.000001,
          routing: ['primary'],
          providers: { primary: openaiProvider(mock.url, { first_byte_timeout_ms: 40_000, total_timeout_ms: 60_000 }) },
        },
      },
    };
    stalled = await startGateway({ config, env: store.env });
    other = await startGateway({ config, env: store.env });
    key = await keyFor('stall', String(Number(BALANCE_TOKENS * PICO_PER_TOKEN) / 1e12));
  });

  after(async () => {
    if (stalled) process.kill(stalled.pid, 'SIGCONT');
    await stalled?.stop();
    await other?.stop();
    await mock?.close();
    store?.stop();
  });

  test('answers in flight when its holds were reclaimed are withheld or charged only what the balance covers', async () => {
    const [initial] = team();
    // In flight on the gateway about to stall: a whole answer due in 22 s, and a stream.
    const whole = post(stalled, chatBody('mock:bill-max mock:slow=22000', { max_tokens: 100 }, MODEL));
    const stream = await startStream(stalled.baseURL, key, 'mock:bill-max mock:stream-slow=1000');
    assert.match(stream.firstChunk, /^data: /);
    const kept = await startStream(stalled.baseURL, key, 'mock:bill-max mock:stream-slow=1000');
    assert.match(kept.firstChunk, /^data: /);
    const [, held] = team();
    assert.ok(held > 2n * 100n * PICO_PER_TOKEN, `both holds and an escrow beyond them are reserved (${held})`);

    // Stopped where it holds no lock of the store's (else retried a moment later).
    await stopHoldingNoLock(stalled.pid, store);
    // Its client gives up on the stream while it is stopped.
    stream.req.destroy();
    // Ten seconds without a heartbeat, and the other gateway gives its holds back to the balance.
    await waitFor(() => team()[1] === 0n, 25_000, 250);
    // ...and spends all of it.
    const drain = await post(other, chatBody('mock:bill-max', { max_tokens: Number(BALANCE_TOKENS) }, MODEL));
    assert.equal(drain.status, 200, `${drain.text} ${team()} ${JSON.stringify(await spend('stall'))}`);
    assert.deepEqual(team(), [0n, 0n]);
    const keptBefore = kept.text().length; // All it relayed before the stop has arrived by now.
    process.kill(stalled.pid, 'SIGCONT');

    // The complete answer is not delivered: its gateway was fenced since it was admitted.
    const withheld = await whole;
    assertError(withheld, { status: 503, code: 'gateway_fenced' });
    // The escrow it had at hand was reclaimed too: the next request is refused before the
    // upstream is asked, not admitted on money the other gateway has spent.
    const asked = mock.requests.length;
    const refused = await post(stalled, chatBody('mock:bill-max', { max_tokens: 100 }, MODEL));
    assertError(refused, { status: 403, code: 'insufficient_balance' });
    assert.equal(mock.requests.length, asked);

    // The stream whose client stayed relays nothing more after the resume: one error event.
    await kept.ended;
    const after = kept.text().slice(keptBefore);
    const events = after.split('\n\n').filter((e) => e.startsWith('data: '));
    assert.equal(events.length, 1, after);
    assert.equal(JSON.parse(events[0].slice(6)).error.code, 'gateway_fenced', after);

    // Both streams are charged what the balance covered (nothing), the rest recorded as
    // uncollected: the one whose client left (499, or 503 when the fence ended it before its
    // client's leaving was noticed) and the one that was fenced (503). The withheld answer's row
    // charges nothing.
    const rows = await waitFor(async () => {
      const r = await spend('stall');
      return r.length === 4 ? r : null;
    }, 10_000, 100);
    const rowOf = (id) => rows.find((r) => r.request_id === id) ?? assert.fail(`no row for ${id}: ${JSON.stringify(rows)}`);
    const left = rowOf(stream.res.headers['x-request-id']);
    assert.ok([499, 503].includes(left.status), JSON.stringify(left));
    const fenced = rowOf(kept.res.headers['x-request-id']);
    assert.equal(fenced.status, 503);
    for (const r of [left, fenced]) {
      assert.equal(r.cost, 0);
      assert.ok(r.uncollected > 0, JSON.stringify(r));
    }
    const refusedRow = rowOf(withheld.headers.get('x-request-id'));
    assert.equal(refusedRow.cost, 0);
    assert.equal(refusedRow.uncollected, 0);
    const charged = rows.reduce((sum, r) => sum + BigInt(Math.round(r.cost * 1e12)), 0n);
    assert.equal(initial - team()[0], charged, 'the balance moved by exactly what the rows charged');
    assert.equal(team()[0], 0n);
    // Nothing stays reserved: the stalled gateway's escrow went with its reclaimed row.
    await waitFor(() => team()[1] === 0n, 5_000, 100);
  });
});
