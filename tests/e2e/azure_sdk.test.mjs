// End-to-end: the official OpenAI Node SDK against a model served by an Azure OpenAI deployment:
// the client changes nothing but the model id, and never learns the deployment's key.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startAzureMock, AZURE_API_VERSION } from '../fixtures/azure_upstream.mjs';
import { DEFAULT_TEXT, MOCK_USAGE, TOOL_ARGUMENTS } from '../fixtures/mock_upstream.mjs';
import { startGateway, GATEWAY_DEFAULTS, sdkError, UPSTREAM_KEY, UPSTREAM_KEY_ENV } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
let mock;
let gw;
let client;

before(async () => {
  mock = await startAzureMock({ apiKey: UPSTREAM_KEY });
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: {
        gpt_azure: {
          routing: ['azure'],
          providers: {
            azure: {
              type: 'azure', api_base: mock.url, model: 'gpt-4o', api_version: AZURE_API_VERSION,
              api_key: `env::${UPSTREAM_KEY_ENV}`, circuit_breaker: { failures: 0 },
            },
          },
        },
      },
    },
    env: { [UPSTREAM_KEY_ENV]: UPSTREAM_KEY },
  });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: 'anything', maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const user = (content) => [{ role: 'user', content }];

describe('an Azure OpenAI deployment via the OpenAI SDK', () => {
  test('non-streamed', T, async () => {
    const c = await client.chat.completions.create({ model: 'gpt_azure', messages: user('hi') });
    assert.equal(c.model, 'gpt_azure');
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(c.usage.total_tokens, MOCK_USAGE.total_tokens);
    assert.equal(mock.requests.at(-1).headers['api-key'], UPSTREAM_KEY);
  });

  test('streamed, with the usage chunk', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt_azure', messages: user('hi'), stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    let finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, DEFAULT_TEXT);
    assert.equal(finish, 'stop');
    assert.equal(usage?.total_tokens, MOCK_USAGE.total_tokens);
  });

  test('the SDK stream helper assembles a streamed tool call', T, async () => {
    const runner = client.chat.completions.stream({
      model: 'gpt_azure', messages: user('weather in Paris? mock:tools'), tools: [WEATHER_TOOL],
    });
    const final = await runner.finalChatCompletion();
    const ch = final.choices[0];
    assert.equal(ch.finish_reason, 'tool_calls');
    assert.equal(ch.message.tool_calls[0].function.name, 'get_weather');
    assert.equal(ch.message.tool_calls[0].function.arguments, TOOL_ARGUMENTS);
  });

  test('the content filter\'s refusal is a BadRequestError naming its categories', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({
      model: 'gpt_azure', messages: user('mock:content-filter'),
    }));
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'upstream_invalid_request');
    assert.match(err.message, /hate: high, violence: medium/);
  });
});
