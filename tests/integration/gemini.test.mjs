// A model served by a Gemini provider: what the upstream receives (the key in x-goog-api-key
// only, the translated generateContent body), answers whole and streamed, thinking billed as
// output, cut streams charged at least the last usageMetadata, image URLs refused before anything
// is fetched or sent, errors mapped, retries, and embeddings.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startGeminiMock, geminiModel, TEXT, TOOL_ARGS, THINKING_TEXT, THINKING_USAGE, USAGE, MODEL, SIGNATURE,
} from '../fixtures/gemini_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, UPSTREAM_KEY, postJson, marker, readSSE, assertChunks,
  assertCompletion, assertError, adminOf, waitFor,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';
const PICO = Object.freeze({ input: 1_250_000n, output: 10_000_000n, cached: 125_000n });
const usd = (pico) => Number(pico) / 1e12;
const PRICES = {
  input_cost_per_token: usd(PICO.input),
  output_cost_per_token: usd(PICO.output),
  cached_input_cost_per_token: usd(PICO.cached),
};
const pico = (dollars) => BigInt(Math.round(dollars * 1e12));
const NO_BREAKER = { circuit_breaker: { failures: 0 } };
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

let mock;
let gw;
let key;
let cases = 0;
const { keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));

before(async () => {
  mock = await startGeminiMock();
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
      models: {
        gem: geminiModel(mock.url, { ...PRICES, max_output_tokens: 900 }, NO_BREAKER),
        gem_retry: geminiModel(mock.url, { ...PRICES, retries: { num_retries: 2, max_delay_ms: 50 } }, NO_BREAKER),
        gem_embed: geminiModel(mock.url, { endpoint: 'embedding', input_cost_per_token: usd(PICO.input) }),
      },
    },
  });
  key = await keyFor('gemini', '10');
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const headers = () => ({ authorization: `Bearer ${key}` });
const post = (body, path = CHAT) => postJson(gw.baseURL, path, body, { headers: headers() });
const stream = (body) => fetch(gw.baseURL + CHAT, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers() },
  body: JSON.stringify({ ...body, stream: true }),
});
/** A body tagged for its spend row; returns [body, tag]. */
function tagged(text, extra = {}, model = 'gem') {
  const tag = `case${++cases}`;
  return [{ model, messages: [{ role: 'user', content: text }], 'tollgate::tags': { case: tag }, ...extra }, tag];
}
async function rowOf(tag) {
  let rows = [];
  await waitFor(async () => (rows = await spend('gemini', '--tag', `case=${tag}`)).length === 1, 5000);
  return rows[0];
}

describe('what the Gemini upstream receives', () => {
  test('generateContent at the model, the key in x-goog-api-key only, a translated body', T, async () => {
    const m = marker('basic');
    const r = await post({
      model: 'gem',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: `hi ${m}` }],
      temperature: 0.3, stop: ['END'], seed: 4, max_tokens: 100,
    });
    assertCompletion(r, { model: 'gem', content: TEXT });
    const sent = mock.find(m);
    assert.equal(sent.url, `/v1beta/models/${MODEL}:generateContent`);
    assert.equal(sent.headers['x-goog-api-key'], UPSTREAM_KEY);
    assert.equal(sent.headers.authorization, undefined);
    assert.ok(!sent.url.includes('key='));
    assert.deepEqual(sent.body, {
      contents: [{ role: 'user', parts: [{ text: `hi ${m}` }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: { maxOutputTokens: 100, temperature: 0.3, seed: 4, stopSequences: ['END'] },
    });
    assert.deepEqual(r.json.usage.prompt_tokens, USAGE.promptTokenCount);
  });

  test('tool history: functionCall parts, functionResponse named after the call, toolConfig', T, async () => {
    const m = marker('history');
    const r = await post({
      model: 'gem',
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp":18}' },
        { role: 'user', content: [{ type: 'text', text: `so? ${m}` }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } }] },
      ],
      tools: [WEATHER],
      tool_choice: 'required',
    });
    assert.equal(r.status, 200, r.text);
    const sent = mock.find(m).body;
    assert.deepEqual(sent.contents, [
      { role: 'user', parts: [{ text: 'weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [
        { functionResponse: { name: 'get_weather', response: { temp: 18 } } },
        { text: `so? ${m}` },
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } },
      ] },
    ]);
    assert.deepEqual(sent.tools, [{ functionDeclarations: [WEATHER.function] }]);
    assert.deepEqual(sent.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  });

  test('an http(s) image URL is refused 400 before anything is fetched or sent', T, async () => {
    let hits = 0;
    const images = http.createServer((req, res) => { hits++; res.end('GIF89a'); });
    await new Promise((resolve) => images.listen(0, '127.0.0.1', resolve));
    try {
      const before = mock.count;
      const r = await post({ model: 'gem', messages: [{ role: 'user', content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: `http://127.0.0.1:${images.address().port}/cat.png` } },
      ] }] });
      assertError(r, { status: 400, code: 'invalid_value', param: 'messages' });
      assert.equal(hits, 0, 'the gateway fetched the client URL');
      assert.equal(mock.count, before, 'something was sent upstream');
    } finally {
      await new Promise((resolve) => images.close(resolve));
    }
  });

  test('a tool message answering no earlier call is refused 400 and nothing is sent', T, async () => {
    const before = mock.count;
    const r = await post({ model: 'gem', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] });
    assertError(r, { status: 400, code: 'invalid_value', param: 'messages' });
    assert.equal(mock.count, before);
  });
});

describe('answers', () => {
  test('a function call becomes tool_calls with a made id', T, async () => {
    const r = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:tools ${marker('tools')}` }], tools: [WEATHER] });
    assert.equal(r.status, 200, r.text);
    const choice = r.json.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(choice.message.tool_calls, [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(TOOL_ARGS) } }]);
  });

  test('a thinking call\'s thoughtSignature rides in its id and goes back with the call', T, async () => {
    const first = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:thinking mock:tools ${marker('sig')}` }], tools: [WEATHER] });
    assert.equal(first.status, 200, first.text);
    const call = first.json.choices[0].message.tool_calls[0];
    assert.ok(call.id.endsWith(SIGNATURE), call.id);
    const m = marker('sig2');
    const second = await post({
      model: 'gem',
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '18C' },
        { role: 'user', content: `thanks ${m}` },
      ],
    });
    assert.equal(second.status, 200, second.text);
    const model = mock.find(m).body.contents[1];
    assert.deepEqual(model, { role: 'model', parts: [{ thoughtSignature: SIGNATURE, functionCall: { name: 'get_weather', args: TOOL_ARGS } }] });
  });

  test('a thinking answer: reasoning_content, and its thinking tokens charged at the output price', T, async () => {
    const [body, tag] = tagged(`mock:thinking ${marker('think')}`);
    const r = await post(body);
    assert.equal(r.status, 200, r.text);
    const { message, finish_reason: finish } = r.json.choices[0];
    assert.equal(message.reasoning_content, THINKING_TEXT);
    assert.equal(message.content, TEXT);
    assert.equal(finish, 'stop');
    const out = THINKING_USAGE.candidatesTokenCount + THINKING_USAGE.thoughtsTokenCount;
    assert.equal(r.json.usage.completion_tokens, out);
    assert.equal(r.json.usage.completion_tokens_details.reasoning_tokens, THINKING_USAGE.thoughtsTokenCount);
    const row = await rowOf(tag);
    assert.equal(row.estimated, false);
    assert.equal(row.completion_tokens, out);
    assert.equal(pico(row.cost), BigInt(THINKING_USAGE.promptTokenCount) * PICO.input + BigInt(out) * PICO.output);
  });

  test('cached content is priced as cached input', T, async () => {
    const [body, tag] = tagged(`mock:cached=10 ${marker('cached')}`);
    const r = await post(body);
    assert.equal(r.json.usage.prompt_tokens_details.cached_tokens, 10);
    const row = await rowOf(tag);
    assert.equal(pico(row.cost), 2n * PICO.input + 10n * PICO.cached + 4n * PICO.output);
  });

  test('finish reasons: MAX_TOKENS is length, SAFETY is content_filter', T, async () => {
    let r = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:length ${marker('len')}` }] });
    assert.equal(r.json.choices[0].finish_reason, 'length');
    r = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:safety ${marker('safe')}` }] });
    assert.equal(r.json.choices[0].finish_reason, 'content_filter');
    assert.equal(r.json.choices[0].message.content, '');
  });

  test('a blocked prompt is 400 upstream_invalid_request naming the reason', T, async () => {
    const r = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:blocked ${marker('blocked')}` }] });
    const e = assertError(r, { status: 400, code: 'upstream_invalid_request' });
    assert.match(e.message, /PROHIBITED_CONTENT/);
  });
});

describe('streams', () => {
  test('streamGenerateContent?alt=sse, ended by its body: chunks, [DONE] and usage', T, async () => {
    const m = marker('stream');
    const sse = await readSSE(await stream({ model: 'gem', messages: [{ role: 'user', content: `mock:thinking ${m}` }], stream_options: { include_usage: true } }));
    assertChunks(sse, 'gem');
    assert.equal(mock.find(m).url, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    const chunks = sse.events.filter((e) => e.json).map((e) => e.json);
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), TEXT);
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join(''), THINKING_TEXT);
    assert.equal(chunks.at(-1).usage.completion_tokens, THINKING_USAGE.candidatesTokenCount + THINKING_USAGE.thoughtsTokenCount);
    assert.equal(sse.events.at(-1).data, '[DONE]');
  });

  test('a streamed function call', T, async () => {
    const sse = await readSSE(await stream({ model: 'gem', messages: [{ role: 'user', content: `mock:tools ${marker('stool')}` }], tools: [WEATHER] }));
    const chunks = sse.events.filter((e) => e.json).map((e) => e.json);
    const call = chunks.find((c) => c.choices[0]?.delta?.tool_calls)?.choices[0].delta.tool_calls[0];
    assert.deepEqual(call, { index: 0, id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(TOOL_ARGS) } });
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
  });

  test('a cut stream is charged at least the last usageMetadata', T, async () => {
    const [body, tag] = tagged(`mock:cut=3 ${marker('cut')}`);
    const sse = await readSSE(await stream(body));
    assert.notEqual(sse.events.at(-1)?.data, '[DONE]');
    const row = await rowOf(tag);
    assert.ok(row.completion_tokens >= 30, `completion_tokens ${row.completion_tokens}`);
    assert.ok(pico(row.cost) >= BigInt(USAGE.promptTokenCount) * PICO.input + 30n * PICO.output, `cost ${row.cost}`);
  });
});

describe('errors and retries', () => {
  const cases_ = [
    [400, 400, 'upstream_invalid_request'],
    [401, 502, 'upstream_auth_failed'],
    [403, 502, 'upstream_auth_failed'],
    [404, 400, 'upstream_invalid_request'],
    [429, 429, 'upstream_rate_limited'],
    [503, 502, 'upstream_unavailable'],
    [504, 504, 'upstream_timeout'],
    [500, 502, 'upstream_error'],
  ];
  for (const [upstream, status, code] of cases_) {
    test(`Gemini ${upstream} is ${status} ${code}`, T, async () => {
      const r = await post({ model: 'gem', messages: [{ role: 'user', content: `mock:status=${upstream} ${marker('err')}` }] });
      const e = assertError(r, { status, code });
      assert.ok(!e.message.includes(UPSTREAM_KEY), 'the key was relayed');
    });
  }

  for (const code of [429, 503]) {
    test(`a ${code} is retried`, T, async () => {
      const m = marker(`flaky${code}`);
      const r = await post({ model: 'gem_retry', messages: [{ role: 'user', content: `mock:flaky=${code} ${m}` }] });
      assert.equal(r.status, 200, r.text);
      assert.equal(mock.requests.filter((x) => JSON.stringify(x.body ?? {}).includes(m)).length, 2);
    });
  }
});

describe('embeddings', () => {
  test('one input through embedContent, several through batchEmbedContents', T, async () => {
    let r = await post({ model: 'gem_embed', input: 'hello' }, '/v1/embeddings');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.length, 1);
    assert.deepEqual(r.json.data[0].embedding, [0.5, 0.5, -0.25]);
    let sent = mock.requests.at(-1);
    assert.equal(sent.url, `/v1beta/models/${MODEL}:embedContent`);
    assert.deepEqual(sent.body, { model: `models/${MODEL}`, content: { parts: [{ text: 'hello' }] } });
    r = await post({ model: 'gem_embed', input: ['a', 'bb'], dimensions: 3 }, '/v1/embeddings');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data.map((d) => d.index), [0, 1]);
    sent = mock.requests.at(-1);
    assert.equal(sent.url, `/v1beta/models/${MODEL}:batchEmbedContents`);
    assert.equal(sent.body.requests.length, 2);
    assert.equal(sent.body.requests[1].outputDimensionality, 3);
    assert.equal(sent.headers['x-goog-api-key'], UPSTREAM_KEY);
  });
});
