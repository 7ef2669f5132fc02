// End-to-end: the official OpenAI Node SDK against a model whose provider speaks Anthropic's
// Messages API: the client changes nothing but the model id.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  startAnthropicMock, anthropicModel, DEFAULT_TEXT, TOOL_PREFACE, TOOL_INPUT, OPENAI_USAGE, WEATHER_TOOL,
  THINKING_TEXT, HIDDEN_THINKING,
} from '../fixtures/anthropic_upstream.mjs';
import { startGateway, GATEWAY_DEFAULTS, runTollgate, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
let mock;
let gw;
let client;

before(async () => {
  mock = await startAnthropicMock();
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: {
        // The SDK retries the error cases: without this the breaker would open after 5 failures.
        claude: anthropicModel(mock.url, {}, { circuit_breaker: { failures: 0 } }),
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: 'anything', maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

// The billed model's prices and the mock's usage (17 prompt tokens, cache reads and writes
// included, and 4 completion tokens): 17 x 0.000001 + 4 x 0.000002 USD.
const PRICES = { input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 };
const COST = 0.000025;

const user = (content) => [{ role: 'user', content }];

describe('an Anthropic-backed model via the OpenAI SDK', () => {
  test('non-streamed', T, async () => {
    const c = await client.chat.completions.create({ model: 'claude', messages: user('hi') });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'claude');
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.prompt_tokens, OPENAI_USAGE.prompt_tokens);
    assert.equal(c.usage.completion_tokens, OPENAI_USAGE.completion_tokens);
    assert.equal(c.usage.total_tokens, OPENAI_USAGE.total_tokens);
  });

  test('streamed, with the usage chunk', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'claude', messages: user('hi'), stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish = null;
    let usage = null;
    let role = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      const ch = chunk.choices[0];
      role ??= ch?.delta?.role ?? null;
      text += ch?.delta?.content ?? '';
      finish = ch?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(role, 'assistant');
    assert.equal(text, DEFAULT_TEXT);
    assert.equal(finish, 'stop');
    assert.equal(usage?.total_tokens, OPENAI_USAGE.total_tokens);
  });

  test('the SDK stream helper assembles a streamed tool call', T, async () => {
    const runner = client.chat.completions.stream({
      model: 'claude', messages: user('weather in Paris? mock:tools'), tools: [WEATHER_TOOL],
    });
    const final = await runner.finalChatCompletion();
    const ch = final.choices[0];
    assert.equal(ch.finish_reason, 'tool_calls');
    assert.equal(ch.message.content, TOOL_PREFACE);
    assert.equal(ch.message.tool_calls.length, 1);
    const call = ch.message.tool_calls[0];
    assert.equal(call.id, 'toolu_mock_1');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), TOOL_INPUT);
  });

  test('a tool round trip: the tool result goes back as a tool_result block', T, async () => {
    const first = await client.chat.completions.create({
      model: 'claude', messages: user('weather? mock:tools'), tools: [WEATHER_TOOL],
    });
    const call = first.choices[0].message.tool_calls[0];
    const second = await client.chat.completions.create({
      model: 'claude',
      tools: [WEATHER_TOOL],
      messages: [
        ...user('weather? mock:tools'),
        first.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: '18C and sunny' },
      ],
    });
    assert.equal(second.choices[0].message.content, DEFAULT_TEXT);
    const sent = mock.requests.at(-1).body;
    assert.deepEqual(sent.messages.at(-1), {
      role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_mock_1', content: '18C and sunny' }],
    });
    assert.deepEqual(sent.messages[1].content.at(-1), { type: 'tool_use', id: 'toolu_mock_1', name: 'get_weather', input: TOOL_INPUT });
  });

  test('thinking is message.reasoning_content; redacted thinking and signatures never arrive', T, async () => {
    const c = await client.chat.completions.create({ model: 'claude', messages: user('hi mock:thinking') });
    const message = c.choices[0].message;
    assert.equal(message.reasoning_content, THINKING_TEXT);
    assert.equal(message.content, DEFAULT_TEXT);
    assert.deepEqual(Object.keys(message).slice(0, 3), ['role', 'reasoning_content', 'content']);
    const raw = JSON.stringify(c);
    for (const hidden of Object.values(HIDDEN_THINKING)) assert.ok(!raw.includes(hidden), hidden);
  });

  test('streamed thinking is delta.reasoning_content, before the content', T, async () => {
    const stream = await client.chat.completions.create({ model: 'claude', messages: user('hi mock:thinking'), stream: true });
    let reasoning = '';
    let text = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta ?? {};
      for (const hidden of Object.values(HIDDEN_THINKING)) assert.ok(!JSON.stringify(chunk).includes(hidden), hidden);
      if (delta.reasoning_content) {
        assert.equal(text, '', 'reasoning after content');
        reasoning += delta.reasoning_content;
      }
      text += delta.content ?? '';
    }
    assert.equal(reasoning, THINKING_TEXT);
    assert.equal(text, DEFAULT_TEXT);
  });

  test('Anthropic 529 overloaded -> an APIError 502 upstream_unavailable', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'claude', messages: user('x mock:status=529') }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_unavailable');
  });

  test('Anthropic 429 -> RateLimitError', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'claude', messages: user('x mock:status=429') }));
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
  });
});

describe('billing of an Anthropic-backed model', () => {
  let billed;
  const admin = async (...args) => {
    const r = await runTollgate(['admin', '--config', billed.configPath, ...args], { env: { XDG_DATA_HOME: billed.dataHome } });
    assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  before(async () => {
    billed = await startGateway({
      config: { gateway: { ...GATEWAY_DEFAULTS, auth: 'required' }, models: { claude: anthropicModel(mock.url, PRICES) } },
    });
  });
  after(() => billed?.stop());

  test('whole and streamed answers are charged for Anthropic usage, cache tokens included', { timeout: 20_000 }, async () => {
    await admin('teams', 'create', 'payer', '--balance', '1');
    const key = (await admin('keys', 'create', '--team', 'payer', '--name', 'sdk')).trim();
    const payer = new OpenAI({ baseURL: `${billed.baseURL}/v1`, apiKey: key, maxRetries: 0, timeout: 8000 });
    const c = await payer.chat.completions.create({ model: 'claude', messages: user('hello') });
    assert.equal(c.usage['tollgate::cost'], COST);
    const stream = await payer.chat.completions.create({
      model: 'claude', messages: user('hello'), stream: true, stream_options: { include_usage: true },
    });
    let cost;
    for await (const chunk of stream) {
      if (chunk.usage) cost = chunk.usage['tollgate::cost'];
    }
    assert.equal(cost, COST);
    // A stream whose client did not ask for usage is billed all the same.
    for await (const chunk of await payer.chat.completions.create({ model: 'claude', messages: user('hello'), stream: true })) {
      assert.equal(chunk.usage ?? undefined, undefined);
    }
    assert.equal(JSON.parse(await admin('teams', 'show', 'payer', '--json')).balance, 0.999925);
  });
});
