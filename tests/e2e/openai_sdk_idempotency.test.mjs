// End-to-end: the official OpenAI Node SDK, retrying as it does by default, against a gateway
// whose client connection drops after the charge (a proxy cuts the first answer on its way back).
// With an Idempotency-Key the SDK's retry gets the same answer, and the team pays once: one
// upstream call, one spend row. Without one, the same drop costs two charges (what the key is
// for).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import { startMock, DEFAULT_TEXT } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, runTollgate, openaiProvider, marker } from '../fixtures/gateway.mjs';

const T = { timeout: 30_000 };
let mock;
let gw;
let proxy;

/** A TCP proxy to `port` that cuts the connection of the first `cuts` answers as their first
 * bytes come back (the gateway has charged by then), and passes everything else. */
function cuttingProxy(port) {
  const state = { cuts: 0, connections: 0 };
  const server = net.createServer((client) => {
    state.connections++;
    const upstream = net.connect(port, '127.0.0.1');
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (state.cuts > 0) {
        state.cuts--;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    state,
    close: () => new Promise((r) => server.close(r)),
  })));
}

const admin = async (...args) => {
  const r = await runTollgate(['admin', '--config', gw.configPath, ...args], { env: { XDG_DATA_HOME: gw.dataHome } });
  assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const teamWithKey = async (name) => {
  await admin('teams', 'create', name, '--balance', '1');
  return (await admin('keys', 'create', '--team', name, '--name', 'sdk')).trim();
};
const spendRows = async (name) => JSON.parse(await admin('spend', 'list', '--team', name, '--json'));
const upstreamCalls = (m) => mock.requests.filter((r) => r.rawBody.includes(m)).length;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({
    config: standardConfig(mock.url, dead, {
      gateway: { auth: 'required' },
      models: {
        priced_model: {
          input_cost_per_token: 0.000001,
          output_cost_per_token: 0.000002,
          routing: ['primary'],
          providers: { primary: openaiProvider(mock.url) },
        },
      },
    }),
  });
  proxy = await cuttingProxy(Number(new URL(gw.baseURL).port));
});
after(async () => {
  await proxy?.close();
  await gw?.stop();
  await mock?.close();
});

/** A client through the proxy that retries (twice, the SDK's default) without waiting long. */
const client = (apiKey, extra = {}) => new OpenAI({
  baseURL: `${proxy.url}/v1`, apiKey, maxRetries: 2, timeout: 8000, ...extra,
});

describe('Idempotency-Key with the SDK\'s retries', () => {
  test('a dropped answer is retried by the SDK and charged once', T, async () => {
    const key = await teamWithKey('retrier');
    const m = marker('sdk');
    proxy.state.cuts = 1;
    const before = proxy.state.connections;
    const { data: c, response } = await client(key).chat.completions.create(
      { model: 'priced_model', messages: [{ role: 'user', content: m }] },
      { headers: { 'Idempotency-Key': `order-${m}` } },
    ).withResponse();
    assert.equal(proxy.state.cuts, 0, 'the first answer was cut');
    assert.ok(proxy.state.connections - before >= 2, 'the SDK retried');
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(upstreamCalls(m), 1);
    const rows = await spendRows('retrier');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].cost, 0.00002);
  });

  test('an SDK that sends its own Idempotency-Key on every request is protected the same way', T, async () => {
    // The SDK makes one key per call and sends it again on each retry when told the header.
    class KeyedOpenAI extends OpenAI {
      idempotencyHeader = 'Idempotency-Key';
    }
    const key = await teamWithKey('keyed');
    const m = marker('keyed');
    proxy.state.cuts = 1;
    const c = await new KeyedOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: key, maxRetries: 2, timeout: 8000 })
      .chat.completions.create({ model: 'priced_model', messages: [{ role: 'user', content: m }] });
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(upstreamCalls(m), 1);
    assert.equal((await spendRows('keyed')).length, 1);
  });

  test('without a key, the same drop is charged twice', T, async () => {
    const key = await teamWithKey('unkeyed');
    const m = marker('unkeyed');
    proxy.state.cuts = 1;
    const c = await client(key).chat.completions.create({ model: 'priced_model', messages: [{ role: 'user', content: m }] });
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(upstreamCalls(m), 2);
    assert.equal((await spendRows('unkeyed')).length, 2);
  });
});
