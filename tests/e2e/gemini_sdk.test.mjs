// End-to-end: the official OpenAI Node SDK against a model whose provider speaks Gemini's
// generateContent API: the client changes nothing but the model id.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGeminiMock, geminiModel, TEXT, TOOL_ARGS, USAGE } from '../fixtures/gemini_upstream.mjs';
import { startGateway, GATEWAY_DEFAULTS, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
let mock;
let gw;
let client;

before(async () => {
  mock = await startGeminiMock();
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: { gem: geminiModel(mock.url, {}, { circuit_breaker: { failures: 0 } }) },
    },
  });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: 'anything', maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const user = (content) => [{ role: 'user', content }];

describe('a Gemini-backed model via the OpenAI SDK', () => {
  test('non-streamed', T, async () => {
    const c = await client.chat.completions.create({ model: 'gem', messages: user('hi') });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'gem');
    assert.equal(c.choices[0].message.content, TEXT);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.prompt_tokens, USAGE.promptTokenCount);
    assert.equal(c.usage.completion_tokens, USAGE.candidatesTokenCount);
  });

  test('streamed, with the usage chunk', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'gem', messages: user('hi'), stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish;
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, TEXT);
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, USAGE.candidatesTokenCount);
  });

  test('a streamed tool call, assembled by the SDK', T, async () => {
    const stream = client.chat.completions.stream({ model: 'gem', messages: user('mock:tools weather?'), tools: [WEATHER] });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), TOOL_ARGS);
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
  });

  test('an error', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'gem', messages: user('mock:status=429') }));
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.error?.code ?? err.code, 'upstream_rate_limited');
  });
});
