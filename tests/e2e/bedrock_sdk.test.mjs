// End-to-end: the official OpenAI Node SDK against a model whose provider is Amazon Bedrock
// (Converse, signed with SigV4 and verified by the mock): the client changes nothing but the
// model id.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  startBedrockMock, bedrockModel, DEFAULT_TEXT, TOOL_PREFACE, TOOL_INPUT, BEDROCK_USAGE,
} from '../fixtures/bedrock_upstream.mjs';
import { startGateway, GATEWAY_DEFAULTS, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const AKID = 'AKIDSDKTEST000001';
const SECRET = 'sdk/test/secret+key/000000000000000001';
let mock;
let gw;
let client;

before(async () => {
  mock = await startBedrockMock({ keys: { [AKID]: SECRET } });
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: {
        titan: bedrockModel(mock.url, {}, {
          access_key_id: AKID, secret_access_key: 'env::TEST_AWS_SECRET', circuit_breaker: { failures: 0 },
        }),
      },
    },
    env: { TEST_AWS_SECRET: SECRET },
  });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: 'anything', maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const user = (content) => [{ role: 'user', content }];
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('a Bedrock-backed model via the OpenAI SDK', () => {
  test('non-streamed', T, async () => {
    const c = await client.chat.completions.create({ model: 'titan', messages: user('hi') });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'titan');
    assert.equal(c.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.prompt_tokens, BEDROCK_USAGE.inputTokens);
    assert.equal(c.usage.completion_tokens, BEDROCK_USAGE.outputTokens);
    assert.equal(mock.requests.at(-1).verdict, 'ok');
  });

  test('streamed, with the usage chunk', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'titan', messages: user('hi'), stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish = null;
    let usage = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, DEFAULT_TEXT);
    assert.equal(finish, 'stop');
    assert.equal(usage.prompt_tokens, BEDROCK_USAGE.inputTokens);
  });

  test('a streamed tool call', T, async () => {
    const stream = await client.chat.completions.create({
      model: 'titan', messages: user('weather? mock:tools'), tools: [WEATHER_TOOL], stream: true,
    });
    let text = '';
    let args = '';
    let name = null;
    let finish = null;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta;
      text += d?.content ?? '';
      for (const call of d?.tool_calls ?? []) {
        name ??= call.function?.name ?? null;
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, TOOL_PREFACE);
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), TOOL_INPUT);
    assert.equal(finish, 'tool_calls');
  });

  test('an error: Bedrock\'s ValidationException is a 400 the SDK raises', T, async () => {
    const err = await sdkError(() => client.chat.completions.create({ model: 'titan', messages: user('x mock:status=400') }));
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'upstream_invalid_request');
  });
});
