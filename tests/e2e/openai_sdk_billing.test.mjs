// End-to-end: billing as the official OpenAI Node SDK sees it: a charged call tells its cost in
// `usage` (streamed on the usage chunk too) and moves the balance by it; a team that cannot cover
// a request gets PermissionDeniedError with code insufficient_balance; a dryrun is not charged.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, runTollgate, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
// mock_model's prices and the mock's usage: 12 x 0.000001 + 4 x 0.000002 USD.
const COST = 0.00002;
let mock;
let gw;
const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
const user = (content) => [{ role: 'user', content }];
const admin = async (...args) => {
  const r = await runTollgate(['admin', '--config', gw.configPath, ...args], { env: { XDG_DATA_HOME: gw.dataHome } });
  assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const teamWithKey = async (name, balance) => {
  await admin('teams', 'create', name, '--balance', balance);
  return (await admin('keys', 'create', '--team', name, '--name', 'sdk')).trim();
};
const balance = async (name) => JSON.parse(await admin('teams', 'show', name, '--json')).balance;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({ config: standardConfig(mock.url, dead, { gateway: { auth: 'required' } }) });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

describe('billing via the SDK', () => {
  test('a charged call reports its cost, streamed and not, and the balance moves by it', T, async () => {
    const key = await teamWithKey('payer', '1');
    const c = await client(key).chat.completions.create({ model: 'mock_model', messages: user('hello') });
    assert.equal(c.usage['tollgate::cost'], COST);
    const stream = await client(key).chat.completions.create({
      model: 'mock_model', messages: user('hello'), stream: true, stream_options: { include_usage: true },
    });
    let cost;
    for await (const chunk of stream) {
      if (chunk.usage) cost = chunk.usage['tollgate::cost'];
    }
    assert.equal(cost, COST);
    assert.equal(await balance('payer'), 0.99996);
  });

  test('a balance that cannot cover a request raises PermissionDeniedError insufficient_balance', T, async () => {
    const key = await teamWithKey('broke', '0.000001');
    const err = await sdkError(() => client(key).chat.completions.create({ model: 'mock_model', messages: user('hi') }));
    assert.ok(err instanceof OpenAI.PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 403);
    assert.equal(err.type, 'permission_error');
    assert.equal(err.code, 'insufficient_balance');
    assert.match(err.message, /short by/);
  });

  test('a dryrun answers without a charge', T, async () => {
    const key = await teamWithKey('dry', '1');
    const c = await client(key).chat.completions.create({ model: 'mock_model', messages: user('hi'), 'tollgate::dryrun': true });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.usage['tollgate::cost'], undefined);
    assert.equal(await balance('dry'), 1);
    assert.equal(JSON.parse(await admin('spend', 'list', '--team', 'dry', '--json')).length, 0);
  });
});
