// End-to-end: the official OpenAI Node SDK against the dev gateway (auth = "required"): a valid
// key works streamed and not; a bad key raises AuthenticationError and a suspended team
// PermissionDeniedError, each with our message and code.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, unpriced, closedPort, runTollgate, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
let mock;
let gw;
let key;
const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
const admin = (...args) =>
  runTollgate(['admin', '--config', gw.configPath, ...args], { env: { XDG_DATA_HOME: gw.dataHome } });
const user = (content) => [{ role: 'user', content }];

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({ config: unpriced(standardConfig(mock.url, dead, { gateway: { auth: 'required' } })) });
  key = gw.stdout.match(/^export TOLLGATE_API_KEY=(\S+)$/m)[1];
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

describe('API keys via the SDK', () => {
  test('a valid key works, non-streamed and streamed', T, async () => {
    const c = await client(key).chat.completions.create({ model: 'mock_model', messages: user('hello') });
    assert.equal(c.object, 'chat.completion');
    const stream = await client(key).chat.completions.create({ model: 'mock_model', messages: user('hello'), stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.ok(text.length > 0);
    const models = await client(key).models.list();
    assert.ok(models.data.some((m) => m.id === 'mock_model'));
  });

  test('a wrong key raises AuthenticationError (401) with our message', T, async () => {
    const wrong = `sk-tollgate-${key.split('-')[2]}-${'x'.repeat(32)}`;
    const err = await sdkError(() => client(wrong).chat.completions.create({ model: 'mock_model', messages: user('hi') }));
    assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 401);
    assert.equal(err.type, 'authentication_error');
    assert.equal(err.code, 'invalid_api_key');
    assert.match(err.message, /Incorrect API key provided/);
    const malformed = await sdkError(() => client('sk-something-else').models.list());
    assert.ok(malformed instanceof OpenAI.AuthenticationError);
    assert.equal(malformed.code, 'malformed_api_key');
  });

  test('a suspended team raises PermissionDeniedError (403) with our message', T, async () => {
    assert.equal((await admin('teams', 'suspend', 'default')).code, 0);
    try {
      const err = await sdkError(() => client(key).chat.completions.create({ model: 'mock_model', messages: user('hi'), stream: true }));
      assert.ok(err instanceof OpenAI.PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 403);
      assert.equal(err.type, 'permission_error');
      assert.equal(err.code, 'team_suspended');
      assert.match(err.message, /suspended/);
    } finally {
      assert.equal((await admin('teams', 'resume', 'default')).code, 0);
    }
    const c = await client(key).chat.completions.create({ model: 'mock_model', messages: user('back') });
    assert.equal(c.object, 'chat.completion');
  });
});
