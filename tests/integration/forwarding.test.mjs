// What the gateway sends upstream (as seen by the mock) and what it passes
// back from a successful upstream answer.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MOCK_USAGE, TOOL_ARGUMENTS } from '../fixtures/mock_upstream.mjs';
import {
  postJson, chatBody, marker, assertCompletion, UPSTREAM_KEY, startMockAndGateway, stopAll,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

before(async () => ({ mock, gw } = await startMockAndGateway()));
after(() => stopAll(gw, mock));

const chat = (body, opts) => postJson(gw.baseURL, CHAT, body, opts);

/** Sends `body` (its last user message gets a marker) and returns the one upstream copy. */
async function forwarded(body, opts) {
  const m = marker('fwd');
  const b = structuredClone(body);
  b.messages[b.messages.length - 1].content += ` ${m}`;
  const { r, up } = await mock.forwardedOnce('/chat/completions', () => chat(b, opts));
  assert.equal(r.status, 200, r.text);
  assert.ok(up.rawBody.includes(m), 'the upstream copy is this request');
  return { r, up, sent: b };
}

const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];

describe('request forwarding', () => {
  test('forwarded fields arrive unchanged; model replaced; request line and headers', T, async () => {
    const body = {
      model: 'mock_model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
      ],
      temperature: 0.25,
      top_p: 0.75,
      stop: ['END', 'STOP'],
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      seed: 42,
      reasoning_effort: 'low',
      verbosity: 'high',
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
      logit_bias: { 50256: -100 },
      logprobs: true,
      top_logprobs: 2,
      user: 'user-1234',
    };
    const { up, sent } = await forwarded(body);
    assert.equal(up.method, 'POST');
    assert.equal(up.url, '/v1/chat/completions');
    assert.match(up.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(up.body.model, 'upstream-model');
    assert.deepEqual(up.body.messages, sent.messages);
    for (const k of ['temperature', 'top_p', 'stop', 'presence_penalty', 'frequency_penalty', 'seed',
      'reasoning_effort', 'verbosity', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format',
      'logit_bias', 'logprobs', 'top_logprobs', 'user']) {
      assert.deepEqual(up.body[k], sent[k], `field ${k}: sent ${JSON.stringify(sent[k])}, upstream got ${JSON.stringify(up.body[k])}`);
    }
    assert.ok(!('stream' in up.body) || up.body.stream === false, `non-streamed request forwarded stream=${up.body.stream}`);
  });

  test('never forwards n, service_tier, tollgate::* or unknown fields', T, async () => {
    const { up } = await forwarded(chatBody('hi', {
      n: 1,
      service_tier: 'priority',
      'tollgate::tags': { source: 'playground' },
      'tollgate::dryrun': true,
      'tollgate::episode_id': '123e4567-e89b-12d3-a456-426614174000',
      'tollgate::include_raw_usage': true,
      'tollgate::include_raw_response': true,
      'tollgate::cache_options': { enabled: 'off' },
      'tollgate::deny_unknown_fields': false,
      some_unknown_field: { nested: true },
    }));
    assert.ok(!('n' in up.body), 'n forwarded');
    assert.ok(!('service_tier' in up.body), 'service_tier forwarded');
    assert.ok(!('some_unknown_field' in up.body), 'unknown field forwarded');
    const leaked = Object.keys(up.body).filter((k) => k.startsWith('tollgate::'));
    assert.deepEqual(leaked, [], `tollgate fields forwarded: ${leaked}`);
  });

  test('the client\'s own bytes are forwarded, and only the allowed members of them', T, async () => {
    // Written by hand: whitespace around every colon, escapes a serialiser would not choose, and
    // members the upstream must never see between those it must.
    const m = marker('raw');
    const text = `{ "tollgate::tags" : {"source":"raw"},
      "messages" :\t[ {"role":"user", "content":"caf\\u00e9 \\/ \\ud83d\\ude00 ${m}"} ],
      "some_unknown_field": {"messages": [1]},
      "model":"mock_model", "temperature" : 1.50 ,"n":1,
      "tollgate::dryrun":false, "stop":null, "user" : "u\\"1\\"" }`;
    const { r, up } = await mock.forwardedOnce('/chat/completions', () => chat(text));
    assert.equal(r.status, 200, r.text);
    const body = JSON.parse(up.rawBody);
    assert.deepEqual(Object.keys(body).sort(),
      ['max_completion_tokens', 'messages', 'model', 'temperature', 'user'], up.rawBody);
    assert.equal(body.model, 'upstream-model');
    assert.equal(body.messages[0].content, `café / \u{1F600} ${m}`);
    assert.equal(body.user, 'u"1"');
    // The values as the client wrote them, not written again.
    assert.ok(up.rawBody.includes(`[ {"role":"user", "content":"caf\\u00e9 \\/ \\ud83d\\ude00 ${m}"} ]`), up.rawBody);
    assert.ok(up.rawBody.includes('"temperature":1.50,'), up.rawBody);
    assert.ok(!up.rawBody.includes('tollgate::') && !up.rawBody.includes('some_unknown_field'), up.rawBody);
  });

  test('a raw control byte inside a request string is invalid JSON, never forwarded', T, async () => {
    for (const byte of ['\x01', '\x1a', '\x1b', '\x1f']) {
      const text = `{"model":"mock_model","messages":[{"role":"user","content":"${'x'.repeat(40)}${byte}${'y'.repeat(40)}"}]}`;
      const r = await chat(text);
      assert.equal(r.status, 400, `byte ${byte.charCodeAt(0)}: ${r.text}`);
      assert.equal(r.json?.error?.code, 'invalid_json', r.text);
    }
    const escaped = await chat(JSON.stringify(chatBody('colour \u001b[31m red')));
    assert.equal(escaped.status, 200, escaped.text);
  });

  test('both max_tokens and max_completion_tokens: the smaller goes as max_completion_tokens', T, async () => {
    let { up } = await forwarded(chatBody('hi', { max_tokens: 50, max_completion_tokens: 30 }));
    assert.equal(up.body.max_completion_tokens, 30);
    assert.ok(!('max_tokens' in up.body), `max_tokens also sent: ${up.body.max_tokens}`);
    ({ up } = await forwarded(chatBody('hi', { max_tokens: 20, max_completion_tokens: 40 })));
    assert.equal(up.body.max_completion_tokens, 20);
    assert.ok(!('max_tokens' in up.body), `max_tokens also sent: ${up.body.max_tokens}`);
  });

  test('only max_tokens: its value is the one limit sent upstream', T, async () => {
    const { up } = await forwarded(chatBody('hi', { max_tokens: 17 }));
    const sentAs = ['max_tokens', 'max_completion_tokens'].filter((k) => k in up.body);
    assert.equal(sentAs.length, 1, `limit sent as ${JSON.stringify(sentAs)}`);
    assert.equal(up.body[sentAs[0]], 17);
  });

  test('only max_completion_tokens: forwarded as is', T, async () => {
    const { up } = await forwarded(chatBody('hi', { max_completion_tokens: 23 }));
    assert.equal(up.body.max_completion_tokens, 23);
    assert.ok(!('max_tokens' in up.body));
  });

  test('no optional fields: no invented sampling parameters, and the output limit the hold covers', T, async () => {
    const { up } = await forwarded(chatBody('hi'));
    for (const k of ['temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'tools', 'n']) {
      assert.ok(!(k in up.body) || up.body[k] === null, `gateway invented ${k}=${JSON.stringify(up.body[k])}`);
    }
    // mock_model's max_output_tokens: an upstream is never left to bill an answer of any length.
    assert.equal(up.body.max_completion_tokens, 500);
  });

  test('upstream Authorization is the provider api_key (env::), not the client key', T, async () => {
    const { up } = await forwarded(chatBody('hi'), { headers: { authorization: 'Bearer client-key-should-not-travel' } });
    assert.equal(up.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  });

  test('streamed: stream=true and stream_options.include_usage=true are sent upstream', T, async () => {
    const m = marker('sfwd');
    const res = await fetch(gw.baseURL + CHAT, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody(`hi ${m}`, { stream: true })),
    });
    assert.equal(res.status, 200);
    await res.text();
    const up = mock.requestsContaining(m)[0];
    assert.ok(up, 'no upstream request');
    assert.equal(up.body.stream, true);
    assert.equal(up.body.stream_options?.include_usage, true);
  });
});

describe('upstream answer passed back', () => {
  test('content, finish_reason and usage come from the upstream; model is the client string', T, async () => {
    const c = assertCompletion(await chat(chatBody('hi')), { model: 'mock_model', content: 'Hello from mock' });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.deepEqual(
      { prompt_tokens: c.usage.prompt_tokens, completion_tokens: c.usage.completion_tokens, total_tokens: c.usage.total_tokens },
      MOCK_USAGE,
    );
    assert.notEqual(c.model, 'upstream-model');
  });

  test('tool calls are passed back (non-streamed)', T, async () => {
    const c = assertCompletion(await chat(chatBody('weather? mock:tools', { tools })));
    const ch = c.choices[0];
    assert.equal(ch.finish_reason, 'tool_calls');
    assert.ok(Array.isArray(ch.message.tool_calls) && ch.message.tool_calls.length === 1, JSON.stringify(ch.message));
    const tc = ch.message.tool_calls[0];
    assert.equal(typeof tc.id, 'string');
    assert.equal(tc.type, 'function');
    assert.equal(tc.function.name, 'get_weather');
    assert.equal(typeof tc.function.arguments, 'string');
    assert.deepEqual(JSON.parse(tc.function.arguments), JSON.parse(TOOL_ARGUMENTS));
  });

  test('a slow upstream within first_byte_timeout_ms is still served', T, async () => {
    const t0 = Date.now();
    assertCompletion(await chat(chatBody('mock:slow=1200')), { content: 'Hello from mock' });
    assert.ok(Date.now() - t0 >= 1100, 'answer came back before the upstream answered?');
  });

  test('concurrent requests are all answered', T, async () => {
    const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(chatBody(`hi ${i} mock:slow=200`))));
    for (const r of rs) assertCompletion(r, { content: 'Hello from mock' });
    const ids = new Set(rs.map((r) => r.json.id));
    assert.equal(ids.size, 8, 'completion ids should be distinct');
  });
});
