// What a misbehaving upstream can send back: our own credentials echoed in any text, and JSON
// nested far past the limit. The provider key never reaches the client, and the gateway serves on.

import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, chatBody, assertError,
  UPSTREAM_KEY, UPSTREAM_KEY_ENV, standardConfig, closedPort, assertStillServing,
} from '../fixtures/gateway.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startRawUpstream, completionResponse, sseChunk, lastUserText } from '../fixtures/raw_upstream.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';
let up;
let gw;

function json(status, obj) {
  const text = JSON.stringify(obj);
  return `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

function sse(events) {
  return `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: ${Buffer.byteLength(events)}\r\n\r\n${events}`;
}

/** Answers by the last user message: each shape an upstream or a proxy in front of it may take. */
function misbehave({ socket, request }) {
  const auth = request.headers.authorization ?? '';
  const echo = `you sent Authorization: ${auth}`;
  const deep = '['.repeat(300_000);
  const answers = {
    auth401: () => json(401, { error: { message: echo, headers: request.headers } }),
    auth403: () => json(403, { error: { message: echo } }),
    err400: () => json(400, { error: { message: echo } }),
    err500: () => `HTTP/1.1 500 X\r\nContent-Type: text/html\r\nContent-Length: ${echo.length}\r\n\r\n${echo}`,
    err429: () => json(429, { error: { message: echo } }),
    content: () => completionResponse(echo),
    stream_error: () => sse(sseChunk('a') + `data: ${JSON.stringify({ error: { message: echo } })}\n\n`),
    stream_content: () => sse(sseChunk(echo) + 'data: [DONE]\n\n'),
    deep: () => `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${deep.length + 5}\r\n\r\n{"a":${deep}`,
    deep_stream: () => sse(`data: {"a":${deep}\n\n`),
  };
  socket.write((answers[lastUserText(request)] ?? answers.content)());
}

before(async () => {
  up = await startRawUpstream(misbehave);
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS },
      models: { raw: { routing: ['p'], providers: { p: openaiProvider(up.url, { api_key: `env::${UPSTREAM_KEY_ENV}` }) } } },
    },
  });
});
after(async () => {
  await gw?.stop();
  await up?.close();
});
// Whatever the upstream sent, the gateway serves on.
afterEach(async () => {
  if (gw) await assertStillServing(gw);
});

async function chat(text, extra = {}) {
  const res = await fetch(gw.baseURL + CHAT, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(text, extra, 'raw')),
  });
  const body = await res.text();
  assert.ok(!body.includes(UPSTREAM_KEY), `the provider key reached the client: ${body.slice(0, 300)}`);
  let parsed;
  try { parsed = JSON.parse(body); } catch { parsed = undefined; }
  return { status: res.status, headers: res.headers, text: body, json: parsed };
}

describe('provider credentials never reach the client', () => {
  for (const which of ['auth401', 'auth403']) {
    test(`upstream ${which.slice(4)} echoing our headers -> 502 upstream_auth_failed with our own message`, T, async () => {
      const e = assertError(await chat(which), { status: 502, type: 'api_error', code: 'upstream_auth_failed' });
      assert.ok(!e.message.includes('you sent'), e.message);
    });
  }
  for (const [which, status, code] of [['err400', 400, 'upstream_invalid_request'], ['err500', 502, 'upstream_error'], ['err429', 429, 'upstream_rate_limited']]) {
    test(`upstream error message quoting the key (${status}) -> [redacted]`, T, async () => {
      const e = assertError(await chat(which), { status, code });
      assert.match(e.message, /Bearer \[redacted\]/);
    });
  }
  test('a completion quoting the key, and its raw echo, are redacted', T, async () => {
    const r = await chat('content', { 'tollgate::include_raw_response': true });
    assert.equal(r.status, 200, r.text);
    assert.match(r.json.choices[0].message.content, /Bearer \[redacted\]/);
    assert.match(JSON.stringify(r.json['tollgate::raw_response']), /\[redacted\]/);
  });
  test('stream events quoting the key are redacted, error events too', T, async () => {
    const ok = await chat('stream_content', { stream: true });
    assert.match(ok.text, /Bearer \[redacted\]/);
    // An error as the stream's first event: nothing had reached the client, so it is answered as
    // a plain error (another provider could have been tried).
    const failed = await chat('stream_error', { stream: true });
    assert.equal(failed.status, 502);
    assert.match(failed.text, /^\{"error":\{"message":"[^"]*Bearer \[redacted\]/);
  });
});

describe('upstream JSON nested past the limit', () => {
  test('a non-streamed answer nested 300,000 deep -> 502 upstream_error, gateway serving', T, async () => {
    assertError(await chat('deep'), { status: 502, code: 'upstream_error' });
    assert.equal((await fetch(`${gw.baseURL}/health`)).status, 200);
  });
  test('a first stream event nested 300,000 deep -> 502 upstream_error, gateway serving', T, async () => {
    // Nothing had reached the client: a plain error, not a 200 stream.
    assertError(await chat('deep_stream', { stream: true }), { status: 502, code: 'upstream_error' });
    assert.equal((await fetch(`${gw.baseURL}/health`)).status, 200);
  });
});

describe('mock_model: an upstream echoing our request headers never shows the client the key', () => {
  let mock;
  let mgw;
  before(async () => {
    mock = await startMock();
    mgw = await startGateway({ config: standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`) });
  });
  after(async () => {
    await mgw?.stop();
    await mock?.close();
  });
  afterEach(async () => {
    if (mgw) await assertStillServing(mgw);
  });

  /** Posts to mock_model; asserts the key reached the mock and not the client. */
  async function ask(content, extra = {}) {
    const before = mock.requests.length;
    const res = await fetch(mgw.baseURL + CHAT, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody(content, extra)),
    });
    const text = await res.text();
    assert.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${UPSTREAM_KEY}`, 'the key was not sent upstream');
    assert.ok(mock.requests.length > before);
    assert.ok(!text.includes(UPSTREAM_KEY), `the provider key reached the client: ${text.slice(0, 400)}`);
    let parsed;
    try { parsed = JSON.parse(text); } catch { parsed = undefined; }
    return { status: res.status, headers: res.headers, text, json: parsed, res };
  }

  for (const status of [401, 403]) {
    test(`upstream ${status} echoing the request headers -> 502 upstream_auth_failed (api_error)`, T, async () => {
      assertError(await ask(`mock:status=${status} mock:echo-headers`), { status: 502, type: 'api_error', code: 'upstream_auth_failed' });
    });
  }
  for (const [up, status, code] of [[400, 400, 'upstream_invalid_request'], [500, 502, 'upstream_error'], [429, 429, 'upstream_rate_limited']]) {
    test(`upstream ${up} whose message quotes the key -> ${status} ${code}, message says [redacted]`, T, async () => {
      const e = assertError(await ask(`mock:status=${up} mock:echo-headers`), { status, code });
      assert.ok(e.message.includes('[redacted]'), e.message);
    });
  }
  test('a stream error event quoting the key -> [redacted]', T, async () => {
    const r = await ask('mock:stream-error mock:echo-headers', { stream: true });
    assert.equal(r.status, 200, r.text);
    const errLine = r.text.split('\n').find((l) => l.startsWith('data: {"error"'));
    assert.ok(errLine, r.text.slice(-400));
    const ev = JSON.parse(errLine.slice(6));
    assert.ok(ev.error.message.includes('[redacted]'), ev.error.message);
    assert.ok(!r.text.includes('data: [DONE]'));
  });
  test('streamed content quoting the key -> [redacted]', T, async () => {
    const r = await ask('mock:echo-headers', { stream: true });
    assert.match(r.text, /data: \[DONE\]/);
    assert.ok(r.text.includes('[redacted]'), r.text.slice(0, 400));
  });
  test('a completion quoting the key with include_raw_response: neither content nor raw_response holds it', T, async () => {
    const r = await ask('mock:echo-headers', { 'tollgate::include_raw_response': true });
    assert.equal(r.status, 200, r.text);
    const content = r.json.choices[0].message.content;
    assert.ok(content.includes('[redacted]'), content);
    assert.ok('tollgate::raw_response' in r.json, Object.keys(r.json).join(','));
    assert.ok(!JSON.stringify(r.json['tollgate::raw_response']).includes(UPSTREAM_KEY));
  });
});
