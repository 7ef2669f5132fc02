// A model served by an Anthropic provider: what the upstream receives (headers, the translated
// Messages body), OpenAI-shaped answers whole and streamed, tool calls, JSON output, and the
// mapping of Anthropic's errors to ours.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startAnthropicMock, anthropicModel, DEFAULT_TEXT, TOOL_PREFACE, TOOL_INPUT, FORCED_INPUT, OPENAI_USAGE, WEATHER_TOOL,
} from '../fixtures/anthropic_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, UPSTREAM_KEY, postJson, chatBody, marker, readSSE,
  assertChunks, assertCompletion, assertError,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
const MAX_OUTPUT = 777;
const NO_BREAKER = { circuit_breaker: { failures: 0 } };
let mock;
let gw;

before(async () => {
  mock = await startAnthropicMock();
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: {
        // The error cases fail the provider on purpose, more than the breaker's default 5 times
        // in a row: it stays closed here (breakers have their own tests in routing.test.mjs).
        claude: anthropicModel(mock.url, { max_output_tokens: MAX_OUTPUT }, NO_BREAKER),
        claude_versioned: anthropicModel(mock.url, {}, { api_version: '2099-01-01' }),
      },
    },
  });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const post = (body) => postJson(gw.baseURL, CHAT, body);
const stream = (body) => fetch(gw.baseURL + CHAT, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ ...body, stream: true }),
});

describe('what the Anthropic upstream receives', () => {
  test('POST /v1/messages with x-api-key, anthropic-version and a translated body', T, async () => {
    const m = marker('basic');
    const r = await post({
      model: 'claude',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: `hi ${m}` }],
      temperature: 0.3, stop: ['END'], user: 'user-9', seed: 4, presence_penalty: 0.5,
    });
    assertCompletion(r, { model: 'claude', content: DEFAULT_TEXT });
    const sent = mock.find(m);
    assert.ok(sent, 'the mock saw no request');
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], UPSTREAM_KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.headers.authorization, undefined);
    assert.deepEqual(sent.body, {
      model: 'claude-mock',
      max_tokens: MAX_OUTPUT,
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'text', text: `hi ${m}` }] }],
      stop_sequences: ['END'],
      temperature: 0.3,
      metadata: { user_id: 'user-9' },
    });
  });

  test('the configured api_version and the client output limit are sent', T, async () => {
    const m = marker('version');
    const r = await post(chatBody(`hi ${m}`, { max_completion_tokens: 50 }, 'claude_versioned'));
    assert.equal(r.status, 200, r.text);
    const sent = mock.find(m);
    assert.equal(sent.headers['anthropic-version'], '2099-01-01');
    assert.equal(sent.body.max_tokens, 50);
  });

  test('tool history: tool_use blocks, merged tool results, tools and tool_choice', T, async () => {
    const m = marker('history');
    const r = await post({
      model: 'claude',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant', content: null, tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '22C' },
        { role: 'user', content: [{ type: 'text', text: `so? ${m}` }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } }] },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    assert.equal(r.status, 200, r.text);
    const sent = mock.find(m).body;
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris and Rome?' }] },
      {
        role: 'assistant', content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '22C' },
          { type: 'text', text: `so? ${m}` },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
        ],
      },
    ]);
    assert.deepEqual(sent.tools, [{ name: 'get_weather', description: WEATHER_TOOL.function.description, input_schema: WEATHER_TOOL.function.parameters }]);
    assert.deepEqual(sent.tool_choice, { type: 'any', disable_parallel_tool_use: true });
  });
});

describe('answers in OpenAI shapes', () => {
  test('non-streamed: content, finish_reason and usage with cache tokens', T, async () => {
    const c = assertCompletion(await post(chatBody('hi', {}, 'claude')), { model: 'claude', content: DEFAULT_TEXT });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.match(c.id, /^msg_mock/);
    assert.deepEqual(
      { prompt_tokens: c.usage.prompt_tokens, completion_tokens: c.usage.completion_tokens, total_tokens: c.usage.total_tokens },
      OPENAI_USAGE);
  });

  test('max_tokens stop reason is finish_reason "length"', T, async () => {
    const c = assertCompletion(await post(chatBody('hi mock:length', {}, 'claude')), { model: 'claude' });
    assert.equal(c.choices[0].finish_reason, 'length');
  });

  test('non-streamed tool call', T, async () => {
    const c = assertCompletion(await post(chatBody('weather? mock:tools', { tools: [WEATHER_TOOL] }, 'claude')), { model: 'claude' });
    const ch = c.choices[0];
    assert.equal(ch.finish_reason, 'tool_calls');
    assert.equal(ch.message.content, TOOL_PREFACE);
    assert.equal(ch.message.tool_calls.length, 1);
    assert.equal(ch.message.tool_calls[0].id, 'toolu_mock_1');
    assert.equal(ch.message.tool_calls[0].type, 'function');
    assert.equal(ch.message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(ch.message.tool_calls[0].function.arguments), TOOL_INPUT);
  });

  test('response_format json_schema: a forced tool whose input is the content', T, async () => {
    const m = marker('json');
    const schema = { type: 'object', properties: { name: { type: 'string' }, born: { type: 'integer' } } };
    const c = assertCompletion(await post(chatBody(`who? ${m}`, {
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
    }, 'claude')), { model: 'claude' });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.choices[0].message.tool_calls, undefined);
    assert.deepEqual(JSON.parse(c.choices[0].message.content), FORCED_INPUT);
    const sent = mock.find(m).body;
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'person' });
    assert.deepEqual(sent.tools[0].input_schema, schema);
  });

  test('streamed text with the usage chunk', T, async () => {
    const res = await stream(chatBody('hi', { stream_options: { include_usage: true } }, 'claude'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const sse = await readSSE(res);
    assertChunks(sse, 'claude');
    assert.equal(sse.done, true);
    assert.equal(sse.error, undefined);
    assert.equal(sse.content, DEFAULT_TEXT);
    assert.equal(sse.chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(new Set(sse.chunks.map((c) => c.id)).size, 1);
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    const last = sse.chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.deepEqual(
      { prompt_tokens: last.usage.prompt_tokens, completion_tokens: last.usage.completion_tokens, total_tokens: last.usage.total_tokens },
      OPENAI_USAGE);
    assert.equal(mock.requests.at(-1).headers.accept, 'text/event-stream');
  });

  test('streamed without include_usage: no usage chunk', T, async () => {
    const sse = await readSSE(await stream(chatBody('hi', {}, 'claude')));
    assert.equal(sse.done, true);
    assert.ok(sse.chunks.every((c) => c.usage === undefined || c.usage === null));
  });

  test('streamed tool call: deltas with index, id, name and arguments', T, async () => {
    const sse = await readSSE(await stream(chatBody('weather? mock:tools', { tools: [WEATHER_TOOL] }, 'claude')));
    assert.equal(sse.done, true, JSON.stringify(sse.events));
    assert.equal(sse.content, TOOL_PREFACE);
    const deltas = sse.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    assert.ok(deltas.length >= 2);
    assert.deepEqual(deltas[0], { index: 0, id: 'toolu_mock_1', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.ok(deltas.every((d) => d.index === 0));
    assert.deepEqual(JSON.parse(deltas.map((d) => d.function.arguments).join('')), TOOL_INPUT);
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls'));
  });

  test('an error event with the first events is a plain error: nothing had reached the client', T, async () => {
    const res = await stream(chatBody('hi mock:error-first', {}, 'claude'));
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, 'upstream_unavailable');
  });

  test('an error event mid-stream ends the stream with our error, no [DONE]', T, async () => {
    const sse = await readSSE(await stream(chatBody('hi mock:stream-error', {}, 'claude')));
    assert.equal(sse.done, false);
    assert.ok(sse.error, JSON.stringify(sse.events));
    assert.equal(typeof sse.error.message, 'string');
    assert.equal(typeof sse.error.code, 'string');
  });
});

describe('errors', () => {
  const cases = [
    { status: 400, expect: { status: 400, code: 'upstream_invalid_request' } },
    { status: 404, expect: { status: 400, code: 'upstream_invalid_request' } },
    { status: 429, expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited' } },
    { status: 500, expect: { status: 502, code: 'upstream_error' } },
    { status: 529, expect: { status: 502, code: 'upstream_unavailable' } },
  ];
  for (const { status, expect } of cases) {
    test(`Anthropic ${status} becomes ${expect.status} ${expect.code}`, T, async () => {
      const e = assertError(await post(chatBody(`x mock:status=${status}`, {}, 'claude')), expect);
      assert.match(e.message, /mock says/);
    });
  }

  test('401 is the operator\'s problem and never echoes the key', T, async () => {
    const r = await post(chatBody('x mock:status=401', {}, 'claude'));
    assertError(r, { status: 502, code: 'upstream_auth_failed' });
    assert.ok(!r.text.includes(UPSTREAM_KEY), r.text);
  });

  test('a streamed request refused upstream gets an error body, not a stream', T, async () => {
    const res = await stream(chatBody('x mock:status=529', {}, 'claude'));
    assert.equal(res.status, 502);
    const body = await res.json();
    assert.equal(body.error.code, 'upstream_unavailable');
  });

  test('tool call arguments that are not a JSON object: our 400, naming messages, nothing sent', T, async () => {
    const sent = mock.requests.length;
    const r = await post({
      model: 'claude',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"cut": "in ha' } }] },
        { role: 'tool', tool_call_id: 't1', content: 'ok' },
      ],
    });
    assertError(r, { status: 400, code: 'invalid_value', param: 'messages' });
    assert.equal(mock.requests.length, sent);
  });
});
