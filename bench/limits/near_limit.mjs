// The near-limit figure of docs/limits.md: three gateways on one store, a key limit of LIMIT
// requests a minute, and a demand equal to the limit spread evenly over each minute, a third of
// it through each gateway. Prints, for each full window, how many were admitted of those sent.
// The shares a gateway leases and gives back make some requests wait for another gateway's idle
// share; the bar is at least 90 % in every full window.
//
//   node bench/limits/near_limit.mjs [--engine sqlite|postgres] [--windows 2] [--limit 60]
// (TOLLGATE_BIN as for the tests; PostgreSQL as the tests start it.)

import { parseArgs } from 'node:util';
import { ENGINES } from '../../tests/fixtures/engines.mjs';
import { startMock } from '../../tests/fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, unpriced, closedPort, adminOf, postJson, chatBody, sleep,
} from '../../tests/fixtures/gateway.mjs';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    windows: { type: 'string', default: '2' },
    limit: { type: 'string', default: '60' },
  },
});
const LIMIT = Number(values.limit);
const WINDOWS = Number(values.windows);
const MINUTE = 60_000;

const engine = ENGINES.find((e) => e.name === values.engine);
const store = await engine.start();
const mock = await startMock();
const dead = `http://127.0.0.1:${await closedPort()}/v1`;
const config = unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } }));
config.storage = store.storage;
config.limits = { key: { rpm: LIMIT } };
const gws = [];
try {
  for (let i = 0; i < 3; i += 1) gws.push(await startGateway({ config, env: store.env }));
  const { ok } = adminOf(() => ({ configPath: gws[0].configPath, env: store.env }));
  await ok('teams', 'create', 'near', '--balance', '10');
  const key = (await ok('keys', 'create', '--team', 'near', '--name', 'near')).stdout.trim();
  // Start at the next minute's beginning, so that every window measured is full.
  await sleep(MINUTE - (Date.now() % MINUTE) + 20);
  const interval = MINUTE / LIMIT; // One request every `interval` ms in all, round robin.
  const results = new Map(); // window start -> {sent, admitted}
  const pending = [];
  const start = Date.now();
  for (let i = 0; i < LIMIT * WINDOWS; i += 1) {
    const due = start + i * interval;
    await sleep(Math.max(0, due - Date.now()));
    const window = due - (due % MINUTE);
    const r = results.get(window) ?? { sent: 0, admitted: 0 };
    results.set(window, r);
    r.sent += 1;
    pending.push(postJson(gws[i % 3].baseURL, '/v1/chat/completions', chatBody(`near ${i}`, {}, 'echo'),
      { headers: { authorization: `Bearer ${key}` } }).then((a) => {
      if (a.status === 200) r.admitted += 1;
      else if (a.status !== 429) throw new Error(`status ${a.status}: ${a.text}`);
    }));
  }
  await Promise.all(pending);
  for (const [window, r] of results) {
    console.log(`${new Date(window).toISOString()}: ${r.admitted} of ${r.sent} admitted (${(100 * r.admitted / r.sent).toFixed(1)} %), limit ${LIMIT}`);
  }
} finally {
  await Promise.all(gws.map((g) => g.stop()));
  await mock.close();
  store.stop();
}
