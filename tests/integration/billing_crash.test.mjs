// A gateway killed with SIGKILL at random moments under load, and restarted, ten times, on each
// store engine: every answer the client received in full has exactly one charged spend row
// (matched by the X-Request-Id of the response), and the balance moved by exactly the sum of the
// rows' costs, to the pico-USD, with nothing left reserved once a gateway has started again.
// The slow tier `kill-loops` (fixtures/tiers.mjs).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import { skipTier } from '../fixtures/tiers.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, runTollgate, chatBody, sleep,
} from '../fixtures/gateway.mjs';

const CYCLES = 10;
const WORKERS = 8;

/** One request to `baseURL`; resolves {id, complete} (complete: the whole answer arrived). */
function call(baseURL, agent, key, streamed) {
  const body = streamed
    ? chatBody('mock:stream-slow=3', { stream: true, stream_options: { include_usage: true } })
    : chatBody('mock:slow=5');
  return new Promise((resolve) => {
    const req = http.request(new URL(baseURL + '/v1/chat/completions'), {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let complete = false;
        if (res.statusCode === 200) {
          if (streamed) {
            complete = text.endsWith('data: [DONE]\n\n');
          } else {
            try { complete = JSON.parse(text).usage['tollgate::cost'] > 0; } catch { /* cut */ }
          }
        }
        resolve({ id: res.headers['x-request-id'], complete });
      });
      res.on('error', () => resolve({ id: res.headers['x-request-id'], complete: false }));
      res.on('aborted', () => resolve({ id: res.headers['x-request-id'], complete: false }));
    });
    req.on('error', () => resolve({ id: null, complete: false }));
    req.end(JSON.stringify(body));
  });
}

/** Runs WORKERS request loops against `gw` until it dies; returns every outcome. */
async function load(gw, key) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });
  const outcomes = [];
  const worker = async (w) => {
    for (let i = 0; gw.alive; i++) {
      outcomes.push(await call(gw.baseURL, agent, key, (w + i) % 2 === 0));
    }
  };
  try {
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  } finally {
    agent.destroy();
  }
  return outcomes;
}

for (const engine of ENGINES) {
  describe(`billing survives SIGKILL on ${engine.name}`, { skip: skipTier('kill-loops') || engine.skip }, () => {
    let store;
    let mock;
    let config;

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { auth: 'required' } });
      config.storage = store.storage;
    });

    after(async () => {
      await mock?.close();
      store?.stop();
    });

    test(`${CYCLES} kills under load: one charged row per answer received, the balance exact to the unit`, async () => {
      // The first start creates the schema; the admin commands need it.
      const first = await startGateway({ config, env: store.env });
      const configPath = first.configPath;
      await first.stop();
      const admin = async (...args) => {
        const r = await runTollgate(['admin', '--config', configPath, ...args], { env: store.env, timeoutMs: 20_000 });
        assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
        return r.stdout;
      };
      await admin('teams', 'create', 'crash', '--balance', '100');
      const key = (await admin('keys', 'create', '--team', 'crash', '--name', 'k')).trim();
      const teamRow = () => store.sql("SELECT balance, reserved FROM teams WHERE name = 'crash'").trim().split('|').map(BigInt);
      const [initial] = teamRow();

      const received = [];
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const gw = await startGateway({ config, env: store.env });
        const outcomes = load(gw, key);
        await sleep(150 + Math.floor(Math.random() * 450));
        await gw.kill();
        received.push(...(await outcomes).filter((o) => o.complete));
      }
      // A start reclaims the holds the killed gateways left.
      const last = await startGateway({ config, env: store.env });
      await last.stop();

      assert.ok(received.length >= CYCLES * 10, `only ${received.length} answers arrived in full`);
      const rows = store.sql("SELECT request_id, cost FROM spend WHERE team_id = (SELECT id FROM teams WHERE name = 'crash')")
        .trim().split('\n').filter(Boolean).map((line) => line.split('|'));
      const charged = new Map();
      for (const [id, cost] of rows) {
        assert.ok(!charged.has(id), `request ${id} has two rows`);
        charged.set(id, BigInt(cost));
      }
      for (const { id } of received) {
        assert.ok(charged.get(id) > 0n, `the answer to request ${id} reached the client but was not charged`);
      }
      const spent = [...charged.values()].reduce((a, b) => a + b, 0n);
      const [balance, reserved] = teamRow();
      assert.equal(reserved, 0n, 'holds of killed gateways are reclaimed at start');
      assert.equal(initial - spent, balance, 'balance = initial - the sum of charged costs');
    });
  });
}
