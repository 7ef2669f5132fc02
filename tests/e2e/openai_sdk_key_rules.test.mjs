// End-to-end: the official OpenAI Node SDK against keys that carry their own rules: an expired key
// raises AuthenticationError (key_expired); a key's allowed models filter models.list() and any
// other model raises PermissionDeniedError (model_not_allowed); a key's rate limit raises
// RateLimitError (key_rpm_exceeded) and its x-ratelimit headers reach the SDK's raw response; a
// spent budget raises PermissionDeniedError (key_budget_exhausted).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, runTollgate, sdkError, sleep } from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
let mock;
let gw;
const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
const admin = async (...args) => {
  const r = await runTollgate(['admin', '--config', gw.configPath, ...args], { env: { XDG_DATA_HOME: gw.dataHome } });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
};
const newKey = (name, ...rules) => admin('keys', 'create', '--team', 'default', '--name', name, ...rules);
const user = (content) => [{ role: 'user', content }];

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({ config: standardConfig(mock.url, dead, { gateway: { auth: 'required' } }) });
  await admin('teams', 'topup', 'default', '10');
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

describe("keys' own rules via the SDK", () => {
  test('an expired key raises AuthenticationError with code key_expired', T, async () => {
    const key = await newKey('short', '--expires-at', new Date(Date.now() + 1500).toISOString());
    const c = await client(key).chat.completions.create({ model: 'echo', messages: user('before') });
    assert.equal(c.object, 'chat.completion');
    await sleep(2000);
    const err = await sdkError(() => client(key).chat.completions.create({ model: 'echo', messages: user('after') }));
    assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'key_expired');
  });

  test('allowed models: the list is filtered and another model is PermissionDeniedError', T, async () => {
    const key = await newKey('narrow', '--allowed-models', 'echo');
    const listed = [];
    for await (const m of client(key).models.list()) listed.push(m.id);
    assert.deepEqual(listed, ['echo']);
    const err = await sdkError(() => client(key).chat.completions.create({ model: 'mock_model', messages: user('hi') }));
    assert.ok(err instanceof OpenAI.PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'model_not_allowed');
    const missing = await sdkError(() => client(key).models.retrieve('mock_model'));
    assert.ok(missing instanceof OpenAI.NotFoundError, `got ${missing?.constructor?.name}`);
  });

  test("a key's rate limit is RateLimitError, and the SDK sees the x-ratelimit headers", T, async () => {
    // Far from a minute's end, so both requests fall in one window.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await sleep(left + 50);
    const key = await newKey('one-a-minute', '--rpm', '1');
    const { data, response } = await client(key).chat.completions
      .create({ model: 'echo', messages: user('first') }).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(response.headers.get('x-ratelimit-limit-requests'), '1');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
    const err = await sdkError(() => client(key).chat.completions.create({ model: 'echo', messages: user('second') }));
    assert.ok(err instanceof OpenAI.RateLimitError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'key_rpm_exceeded');
    assert.ok(Number(err.headers.get('retry-after')) >= 1);
  });

  test('a spent budget is PermissionDeniedError with code key_budget_exhausted', T, async () => {
    const key = await newKey('penny', '--budget-usd', '0.000001', '--budget-window', 'day');
    const err = await sdkError(() => client(key).chat.completions.create({ model: 'mock_model', messages: user('hi'), max_tokens: 10 }));
    assert.ok(err instanceof OpenAI.PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'key_budget_exhausted');
    assert.match(err.message, /resets at /);
  });
});
