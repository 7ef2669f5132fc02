// A model served by an Amazon Bedrock provider (Converse and ConverseStream): what the upstream
// receives (a SigV4 signature the mock verifies on its own, the translated body), OpenAI-shaped
// answers whole and streamed (AWS event-stream frames), tool use, cache points priced as cache
// reads and writes, refusals before anything is sent, Bedrock's errors and stream exceptions,
// frames with a bad CRC, the redaction of what was signed, and keys rotated in a credentials
// file used by the next request without a restart.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  startBedrockMock, bedrockModel, DEFAULT_TEXT, TOOL_PREFACE, TOOL_INPUT, BEDROCK_USAGE, UPSTREAM_MODEL,
} from '../fixtures/bedrock_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, postJson, chatBody, marker, readSSE, assertChunks, assertCompletion,
  assertError, writeTempFile, adminOf, UPSTREAM_KEY, UPSTREAM_KEY_ENV,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';
const AKID = 'AKIDTOLLGATETEST1';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYTESTKEY1';
const TOKEN = 'session-token-tollgate-test-FwoGZXIvYXdz';
const FILE_AKID = 'AKIDFILEOLD000001';
const FILE_SECRET = 'file/secret+old/0000000000000000000001';
const NEW_AKID = 'AKIDFILENEW000002';
const NEW_SECRET = 'file/secret+new/0000000000000000000002';
const NO_BREAKER = { circuit_breaker: { failures: 0 } };
// Pico-USD per token of each kind.
const PICO = Object.freeze({ input: 3_000_000n, output: 15_000_000n, cached: 300_000n, write: 3_750_000n });
const usd = (pico) => Number(pico) / 1e12;
const PRICES = {
  input_cost_per_token: usd(PICO.input),
  output_cost_per_token: usd(PICO.output),
  cached_input_cost_per_token: usd(PICO.cached),
  cache_write_cost_per_token: usd(PICO.write),
};
const pico = (dollars) => BigInt(Math.round(dollars * 1e12));
// A long system prompt worth caching: its bytes also bound the prompt tokens the request may be
// charged for, above the counts the mock reports here.
const POLICY = 'Answer questions about the travel policy below, citing its sections. '.repeat(60);

let mock; // signed with configured keys and a session token
let fileMock; // signed with keys from a credentials file
let keyMock; // a Bedrock API key
let gw;
let credentialsFile;
let key;
const { keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome, TEST_AWS_SECRET: SECRET, TEST_AWS_TOKEN: TOKEN } }));

const credentialsText = (akid, secret) =>
  `# written by the test\n[default]\naws_access_key_id = nope\naws_secret_access_key = nope\n\n[profile rotating]\naws_access_key_id = ${akid}\naws_secret_access_key = ${secret}\n`;

before(async () => {
  mock = await startBedrockMock({ keys: { [AKID]: SECRET }, sessionToken: TOKEN });
  fileMock = await startBedrockMock({ keys: { [FILE_AKID]: FILE_SECRET } });
  keyMock = await startBedrockMock({ apiKey: UPSTREAM_KEY });
  credentialsFile = writeTempFile('credentials', credentialsText(FILE_AKID, FILE_SECRET));
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
      models: {
        nova: bedrockModel(mock.url, { ...PRICES, max_output_tokens: 777, retries: { num_retries: 1, max_delay_ms: 20 } }, {
          access_key_id: AKID, secret_access_key: 'env::TEST_AWS_SECRET', session_token: 'env::TEST_AWS_TOKEN', ...NO_BREAKER,
        }),
        filed: bedrockModel(fileMock.url, {}, { credentials_file: credentialsFile, profile: 'rotating', ...NO_BREAKER }),
        keyed: bedrockModel(keyMock.url, {}, { api_key: `env::${UPSTREAM_KEY_ENV}`, ...NO_BREAKER }),
      },
    },
    env: { TEST_AWS_SECRET: SECRET, TEST_AWS_TOKEN: TOKEN },
  });
  key = await keyFor('bedrock', '100');
});
after(async () => {
  await gw?.stop();
  await Promise.all([mock?.close(), fileMock?.close(), keyMock?.close()]);
});

const post = (body) => postJson(gw.baseURL, CHAT, body, { headers: { authorization: `Bearer ${key}` } });
const stream = (body) => fetch(gw.baseURL + CHAT, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  body: JSON.stringify({ ...body, stream: true }),
});
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('what Bedrock receives', () => {
  test('a signed POST to /model/{id}/converse with the translated body', T, async () => {
    const m = marker('basic');
    const r = await post({
      model: 'nova',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: `hi ${m}` }],
      temperature: 0.3, stop: ['END'], seed: 4,
    });
    assertCompletion(r, { model: 'nova', content: DEFAULT_TEXT });
    const sent = mock.find(m);
    assert.equal(sent.verdict, 'ok');
    assert.equal(sent.url, `/model/${encodeURIComponent(UPSTREAM_MODEL)}/converse`);
    assert.match(sent.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDTOLLGATETEST1\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/);
    assert.equal(sent.headers['x-amz-security-token'], TOKEN);
    assert.deepEqual(sent.body, {
      messages: [{ role: 'user', content: [{ text: `hi ${m}` }] }],
      system: [{ text: 'be brief' }],
      inferenceConfig: { maxTokens: 777, temperature: 0.3, stopSequences: ['END'] },
    });
    assert.equal(r.json.usage.prompt_tokens, BEDROCK_USAGE.inputTokens);
    assert.equal(r.json.usage.completion_tokens, BEDROCK_USAGE.outputTokens);
  });

  test('a Bedrock API key is sent as a bearer token', T, async () => {
    const m = marker('apikey');
    const r = await post(chatBody(`hi ${m}`, {}, 'keyed'));
    assertCompletion(r, { model: 'keyed', content: DEFAULT_TEXT });
    assert.equal(keyMock.find(m).headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.ok(!r.text.includes(UPSTREAM_KEY));
  });

  test('an http(s) image URL is refused with 400 invalid_value, nothing sent', T, async () => {
    const sent = mock.count;
    const r = await post({
      model: 'nova',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    assertError(r, { status: 400, code: 'invalid_value', param: 'messages' });
    assert.equal(mock.count, sent);
  });

  test('a data: URL image is sent as bytes', T, async () => {
    const m = marker('image');
    const r = await post({
      model: 'nova',
      messages: [{ role: 'user', content: [{ type: 'text', text: `what is it? ${m}` }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } }] }],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(mock.find(m).body.messages[0].content[1], { image: { format: 'png', source: { bytes: 'iVBORw0K' } } });
  });
});

describe('answers', () => {
  test('tool use, whole: tool_calls with the input as arguments', T, async () => {
    const m = marker('tools');
    const r = await post(chatBody(`weather? mock:tools ${m}`, { tools: [WEATHER_TOOL], tool_choice: 'required' }, 'nova'));
    const c = assertCompletion(r, { model: 'nova', content: TOOL_PREFACE });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    const call = c.choices[0].message.tool_calls[0];
    assert.equal(call.id, 'tooluse_mock_1');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), TOOL_INPUT);
    const sent = mock.find(m).body;
    assert.deepEqual(sent.toolConfig.toolChoice, { any: {} });
    assert.deepEqual(sent.toolConfig.tools[0].toolSpec.inputSchema.json, WEATHER_TOOL.function.parameters);
  });

  test('max_tokens becomes finish_reason length', T, async () => {
    const r = await post(chatBody('long mock:length', {}, 'nova'));
    assert.equal(assertCompletion(r, { model: 'nova' }).choices[0].finish_reason, 'length');
  });

  test('streamed text with the usage chunk', T, async () => {
    const m = marker('stream');
    const res = await stream(chatBody(`hi ${m}`, { stream_options: { include_usage: true } }, 'nova'));
    assert.equal(res.status, 200);
    const sse = await readSSE(res);
    assertChunks(sse, 'nova');
    assert.equal(sse.done, true, JSON.stringify(sse.events));
    assert.equal(sse.content, DEFAULT_TEXT);
    assert.equal(sse.chunks[0].choices[0].delta.role, 'assistant');
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    assert.equal(sse.chunks.at(-1).usage.prompt_tokens, BEDROCK_USAGE.inputTokens);
    const sent = mock.find(m);
    assert.match(sent.url, /\/converse-stream$/);
    assert.equal(sent.headers.accept, 'application/vnd.amazon.eventstream');
  });

  test('streamed tool call: deltas with index, id, name and arguments', T, async () => {
    const sse = await readSSE(await stream(chatBody('weather? mock:tools', { tools: [WEATHER_TOOL] }, 'nova')));
    assert.equal(sse.done, true, JSON.stringify(sse.events));
    assert.equal(sse.content, TOOL_PREFACE);
    const deltas = sse.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    assert.deepEqual(deltas[0], { index: 0, id: 'tooluse_mock_1', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.deepEqual(JSON.parse(deltas.map((d) => d.function.arguments).join('')), TOOL_INPUT);
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls'));
  });
});

describe('cache points and cached tokens', () => {
  const READS = 2000;
  const WRITES = 1000;
  const prompt = BEDROCK_USAGE.inputTokens + READS + WRITES;
  const want = BigInt(BEDROCK_USAGE.inputTokens) * PICO.input + BigInt(READS) * PICO.cached +
    BigInt(WRITES) * PICO.write + BigInt(BEDROCK_USAGE.outputTokens) * PICO.output;

  for (const streamed of [false, true]) {
    test(`${streamed ? 'streamed' : 'whole'}: cache_control is a cachePoint; reads and writes priced, the spend row exact`, T, async () => {
      const m = marker(`cache${streamed}`);
      const body = {
        model: 'nova',
        'tollgate::tags': { case: m },
        messages: [
          { role: 'system', content: [{ type: 'text', text: POLICY, cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: [{ type: 'text', text: `q ${m} mock:cache-read=${READS} mock:cache-write=${WRITES}` }] },
        ],
      };
      let usage;
      if (streamed) {
        const sse = await readSSE(await stream({ ...body, stream_options: { include_usage: true } }));
        assert.equal(sse.done, true, JSON.stringify(sse.events));
        usage = sse.chunks.at(-1).usage;
      } else {
        const r = await post(body);
        assert.equal(r.status, 200, r.text);
        usage = r.json.usage;
      }
      assert.deepEqual(mock.find(m).body.system, [{ text: POLICY }, { cachePoint: { type: 'default' } }]);
      assert.equal(usage.prompt_tokens, prompt);
      assert.equal(usage.prompt_tokens_details.cached_tokens, READS);
      assert.equal(usage['tollgate::cache_write_tokens'], WRITES);
      assert.equal(pico(usage['tollgate::cost']), want);
      const rows = await spend('bedrock', '--tag', `case=${m}`);
      assert.equal(rows.length, 1);
      assert.equal(pico(rows[0].cost), want, JSON.stringify(rows[0]));
      assert.equal(rows[0].estimated, false);
    });
  }

  test('a count that is not a count leaves the usage estimated, and flagged', T, async () => {
    const m = marker('badusage');
    const r = await post({ ...chatBody(`q ${m} mock:bad-usage`, {}, 'nova'), 'tollgate::tags': { case: m } });
    assert.equal(r.status, 200, r.text);
    const rows = await spend('bedrock', '--tag', `case=${m}`);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].estimated, true);
  });
});

describe('errors', () => {
  const cases = [
    { status: 400, expect: { status: 400, code: 'upstream_invalid_request' } },
    { status: 404, expect: { status: 400, code: 'upstream_invalid_request' } },
    { status: 408, expect: { status: 504, code: 'upstream_timeout' } },
    { status: 429, expect: { status: 429, code: 'upstream_rate_limited' } },
    { status: 500, expect: { status: 502, code: 'upstream_error' } },
    { status: 503, expect: { status: 502, code: 'upstream_unavailable' } },
  ];
  for (const { status, expect } of cases) {
    test(`Bedrock ${status} becomes ${expect.code}`, T, async () => {
      const r = await post(chatBody(`x mock:status=${status}`, {}, 'nova'));
      const e = assertError(r, { code: expect.code });
      assert.equal(r.status, expect.status, r.text);
      assert.match(e.message, /mock says|upstream/);
    });
  }

  test('403 is the operator\'s problem and never echoes what was signed', T, async () => {
    const r = await post(chatBody('x mock:status=403', {}, 'nova'));
    assertError(r, { status: 502, code: 'upstream_auth_failed' });
    for (const secret of [SECRET, TOKEN, AKID]) assert.ok(!r.text.includes(secret), r.text);
  });

  test('throttling is retried like a 429', T, async () => {
    const m = marker('throttle');
    const before = mock.count;
    const r = await post(chatBody(`x mock:throttle-first ${m}`, {}, 'nova'));
    assertCompletion(r, { model: 'nova', content: DEFAULT_TEXT });
    assert.equal(mock.count - before, 2);
  });

  test('an exception frame mid-stream ends the stream with a typed error, no [DONE]', T, async () => {
    const sse = await readSSE(await stream(chatBody('hi mock:exception', {}, 'nova')));
    assert.equal(sse.done, false);
    assert.ok(sse.error, JSON.stringify(sse.events));
    assert.equal(sse.error.code, 'upstream_error');
    assert.match(sse.error.message, /the model stream failed/);
  });

  test('a throttlingException frame mid-stream is upstream_rate_limited', T, async () => {
    const sse = await readSSE(await stream(chatBody('hi mock:throttle-stream', {}, 'nova')));
    assert.equal(sse.done, false);
    assert.equal(sse.error?.code, 'upstream_rate_limited', JSON.stringify(sse.events));
  });

  test('a frame with a bad CRC ends the stream with an error', T, async () => {
    const sse = await readSSE(await stream(chatBody('hi mock:bad-crc', {}, 'nova')));
    assert.equal(sse.done, false);
    assert.ok(sse.error, JSON.stringify(sse.events));
    assert.ok(!sse.content.includes('corrupt'));
  });

  test('what was signed is redacted from answers, raw responses included', T, async () => {
    const m = marker('echo');
    const r = await post({ ...chatBody(`x mock:echo-auth ${m}`, {}, 'nova'), 'tollgate::include_raw_response': true });
    assert.equal(r.status, 200, r.text);
    const sent = mock.find(m).headers;
    const sig = sent.authorization.match(/Signature=([0-9a-f]+)/)[1];
    assert.match(r.json.choices[0].message.content, /^you sent AWS4-HMAC-SHA256/);
    for (const secret of [SECRET, TOKEN, sig]) assert.ok(!r.text.includes(secret), `${secret} in ${r.text}`);
  });

  test('a refused signature: upstream_auth_failed, and neither key nor signature reaches the client', T, async () => {
    mock.setKeys({ OTHERKEY: 'other' });
    try {
      const m = marker('refused');
      const r = await post({ ...chatBody(`x ${m}`, {}, 'nova'), 'tollgate::include_raw_response': true });
      assertError(r, { status: 502, code: 'upstream_auth_failed' });
      const sig = mock.find(m).headers.authorization.match(/Signature=([0-9a-f]+)/)[1];
      for (const secret of [SECRET, TOKEN, sig]) assert.ok(!r.text.includes(secret), r.text);
    } finally {
      mock.setKeys({ [AKID]: SECRET });
    }
  });
});

describe('credentials file', () => {
  test('keys rewritten in the file sign the next request, without a restart', T, async () => {
    const m1 = marker('old');
    assertCompletion(await post(chatBody(`hi ${m1}`, {}, 'filed')), { model: 'filed', content: DEFAULT_TEXT });
    assert.match(fileMock.find(m1).headers.authorization, new RegExp(`Credential=${FILE_AKID}/`));
    // The agent rotates: the mock accepts only the new key, and the file names it.
    fileMock.setKeys({ [NEW_AKID]: NEW_SECRET });
    fs.writeFileSync(credentialsFile, credentialsText(NEW_AKID, NEW_SECRET));
    const m2 = marker('new');
    const r = await post(chatBody(`hi ${m2}`, {}, 'filed'));
    assertCompletion(r, { model: 'filed', content: DEFAULT_TEXT });
    assert.equal(fileMock.find(m2).verdict, 'ok');
    assert.match(fileMock.find(m2).headers.authorization, new RegExp(`Credential=${NEW_AKID}/`));
  });

  test('a file without the profile: 502 upstream_auth_failed, nothing sent', T, async () => {
    const saved = fs.readFileSync(credentialsFile, 'utf8');
    fs.writeFileSync(credentialsFile, '[default]\naws_access_key_id = A\naws_secret_access_key = B\n');
    try {
      const sent = fileMock.count;
      const r = await post(chatBody('hi', {}, 'filed'));
      const e = assertError(r, { status: 502, code: 'upstream_auth_failed' });
      assert.match(e.message, /profile/);
      assert.ok(!e.message.includes(credentialsFile));
      assert.equal(fileMock.count, sent);
    } finally {
      fs.writeFileSync(credentialsFile, saved);
    }
  });
});
