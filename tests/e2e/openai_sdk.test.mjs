// End-to-end: the official OpenAI Node SDK pointed at Tollgate, as a client
// would use it after changing only base URL, API key and model id.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock, MOCK_USAGE, TOOL_ARGUMENTS, UPSTREAM_ERROR_MESSAGES } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, UUID_RE, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
let mock;
let gw;
let client;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({ config: standardConfig(mock.url, dead) });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: 'anything', maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const user = (content) => [{ role: 'user', content }];
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
  },
};


describe('chat completions via the SDK', () => {
  test('non-streamed', T, async () => {
    const c = await client.chat.completions.create({ model: 'mock_model', messages: user('hi') });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'mock_model');
    assert.equal(c.choices.length, 1);
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(c.choices[0].message.content, 'Hello from mock');
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.prompt_tokens, MOCK_USAGE.prompt_tokens);
    assert.equal(c.usage.completion_tokens, MOCK_USAGE.completion_tokens);
    assert.equal(c.usage.total_tokens, MOCK_USAGE.total_tokens);
    assert.match(c.episode_id, UUID_RE);
    assert.equal(c.service_tier, 'auto');
  });

  test('withResponse exposes a JSON response', T, async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'echo', messages: user('raw access') })
      .withResponse();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(data.choices[0].message.content, 'raw access');
  });

  test('streamed with stream_options.include_usage: deltas, then a usage chunk', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'mock_model',
      messages: user('hi'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish = null;
    const usageChunks = [];
    let n = 0;
    for await (const chunk of stream) {
      n++;
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, 'mock_model');
      if (chunk.usage) usageChunks.push(chunk);
      for (const ch of chunk.choices) {
        text += ch.delta?.content ?? '';
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    }
    assert.ok(n >= 3, `only ${n} chunks`);
    assert.equal(text, 'Hello from mock');
    assert.equal(finish, 'stop');
    assert.equal(usageChunks.length, 1);
    assert.deepEqual(usageChunks[0].choices, []);
    assert.equal(usageChunks[0].usage.total_tokens, MOCK_USAGE.total_tokens);
  });

  test('streamed without include_usage: no usage chunk', T, async () => {
    const stream = await client.chat.completions.create({ model: 'mock_model', messages: user('hi'), stream: true });
    let text = '';
    for await (const chunk of stream) {
      assert.ok(!chunk.usage, `usage chunk leaked: ${JSON.stringify(chunk)}`);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, 'Hello from mock');
  });

  test('echo model, streamed', T, async () => {
    const stream = await client.chat.completions.create({ model: 'echo', messages: user('echo via sdk'), stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'echo via sdk');
  });

  test('tool call, non-streamed', T, async () => {
    const c = await client.chat.completions.create({
      model: 'mock_model',
      messages: user('What is the weather in Paris? mock:tools'),
      tools: [weatherTool],
      tool_choice: 'auto',
    });
    const ch = c.choices[0];
    assert.equal(ch.finish_reason, 'tool_calls');
    assert.equal(ch.message.tool_calls.length, 1);
    const tc = ch.message.tool_calls[0];
    assert.equal(tc.type, 'function');
    assert.equal(typeof tc.id, 'string');
    assert.equal(tc.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(tc.function.arguments), JSON.parse(TOOL_ARGUMENTS));
    // The upstream saw the tool definitions.
    const up = mock.requests.findLast((r) => r.rawBody.includes('What is the weather in Paris?'));
    assert.deepEqual(up.body.tools, [weatherTool]);
    assert.equal(up.body.tool_choice, 'auto');
  });

  test('tool call, streamed: argument deltas assemble into the call', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'mock_model',
      messages: user('weather please mock:tools'),
      tools: [weatherTool],
      stream: true,
    });
    const calls = [];
    let finish = null;
    let argDeltas = 0;
    for await (const chunk of stream) {
      const ch = chunk.choices[0];
      if (!ch) continue;
      if (ch.finish_reason) finish = ch.finish_reason;
      for (const d of ch.delta?.tool_calls ?? []) {
        calls[d.index] ??= { id: '', name: '', arguments: '' };
        if (d.id) calls[d.index].id = d.id;
        if (d.function?.name) calls[d.index].name += d.function.name;
        if (d.function?.arguments) { calls[d.index].arguments += d.function.arguments; argDeltas++; }
      }
    }
    assert.equal(finish, 'tool_calls');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_weather');
    assert.ok(calls[0].id);
    assert.ok(argDeltas >= 2, `arguments arrived in ${argDeltas} delta(s)`);
    assert.deepEqual(JSON.parse(calls[0].arguments), JSON.parse(TOOL_ARGUMENTS));
  });

  test('SDK stream helper (chat.completions.stream) assembles the final completion', T, async () => {
    const runner = client.chat.completions.stream({ model: 'mock_model', messages: user('helper mock:tools'), tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    const tc = final.choices[0].message.tool_calls[0];
    assert.equal(tc.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(tc.function.arguments), JSON.parse(TOOL_ARGUMENTS));
  });
});

describe('errors as SDK exceptions', () => {
  test('n = 2 -> BadRequestError 400 invalid_value (param n)', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'mock_model', messages: user('hi'), n: 2 }));
    assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.code, 'invalid_value');
    assert.equal(err.param, 'n');
  });

  test('bare-string stop -> BadRequestError (param stop)', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'mock_model', messages: user('hi'), stop: 'END' }));
    assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}`);
    assert.equal(err.code, 'invalid_value');
    assert.equal(err.param, 'stop');
  });

  for (const model of ['no_such_model', 'gpt-4o', 'openai/gpt-4o']) {
    test(`unknown model ${model} -> NotFoundError 404 model_not_found`, T, async () => {
      const err = await sdkError(() => client.chat.completions.create({ model, messages: user('hi') }));
      assert.ok(err instanceof OpenAI.NotFoundError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 404);
      assert.equal(err.type, 'invalid_request_error');
      assert.equal(err.code, 'model_not_found');
      assert.equal(err.param, 'model');
    });
  }

  test('upstream 429 -> RateLimitError (no retries)', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'mock_model', messages: user('mock:status=429') }));
    assert.ok(err instanceof OpenAI.RateLimitError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 429);
    assert.equal(err.type, 'rate_limit_error');
    assert.equal(err.code, 'upstream_rate_limited');
    assert.ok(err.message.includes(UPSTREAM_ERROR_MESSAGES[429]), err.message);
  });

  test('upstream 500 -> InternalServerError 502 upstream_error', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'mock_model', messages: user('mock:status=500') }));
    assert.ok(err instanceof OpenAI.InternalServerError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 502);
    assert.equal(err.type, 'api_error');
    assert.equal(err.code, 'upstream_error');
  });

  test('upstream connection refused -> 502 upstream_unavailable', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'dead_model', messages: user('hi') }));
    assert.ok(err instanceof OpenAI.APIError, `got ${err?.constructor?.name}`);
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_unavailable');
  });

  test('stream interrupted upstream -> the async iterator throws an APIError', T, async () => {
    const stream = await client.chat.completions.create({ model: 'mock_model', messages: user('mock:cut'), stream: true });
    let text = '';
    const err = await sdkError(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    });
    assert.ok(err instanceof OpenAI.APIError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, 'upstream_stream_interrupted');
    assert.equal(typeof err.type, 'string');
    assert.ok(text.startsWith('Hello'), `text before the cut: ${JSON.stringify(text)}`);
  });

  test('upstream error event mid-stream -> the async iterator throws', T, async () => {
    const stream = await client.chat.completions.create({ model: 'mock_model', messages: user('mock:stream-error'), stream: true });
    const err = await sdkError(async () => {
      for await (const chunk of stream) void chunk;
    });
    assert.ok(err instanceof OpenAI.APIError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(typeof err.code, 'string');
  });
});

describe('models via the SDK', () => {
  test('models.list() returns the catalogue', T, async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      ids.push(m.id);
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(typeof m.owned_by, 'string');
    }
    for (const id of ['mock_model', 'echo', 'tee_model', 'plain_model']) assert.ok(ids.includes(id), `${id} missing from ${ids}`);
    const mock = (await client.models.list()).data.find((m) => m.id === 'mock_model');
    assert.equal(mock.owned_by, 'tests');
    assert.equal(mock.created, 1700000000);
    assert.equal(mock.display_name, 'Mock');
  });

  test('models.retrieve() returns the item the list has', T, async () => {
    const item = await client.models.retrieve('mock_model');
    const listed = (await client.models.list()).data.find((m) => m.id === 'mock_model');
    assert.deepEqual(item, listed);
  });

  for (const id of ['gpt-4o-mini', 'openai/gpt-4o-mini', 'nope']) {
    test(`models.retrieve(${JSON.stringify(id)}) -> NotFoundError model_not_found`, T, async () => {
      const err = await sdkError(() => client.models.retrieve(id));
      assert.ok(err instanceof OpenAI.NotFoundError, `${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      assert.equal(err.param, 'model');
    });
  }

  test('models.list() with allow_tee=false via query', T, async () => {
    const page = await client.models.list({ query: { allow_tee: 'false' } });
    const ids = page.data.map((m) => m.id);
    assert.ok(!ids.includes('tee_model'), `tee_model listed: ${ids}`);
    assert.ok(ids.includes('mock_model'));
  });
});
