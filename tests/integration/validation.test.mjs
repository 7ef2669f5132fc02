// Request validation on POST /v1/chat/completions: each rule is checked both
// ways (the bad request is refused with the catalogued error, and a close
// valid variant is served).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  postJson, chatBody, marker, assertError, assertCompletion, readSSE, startMockAndGateway, stopAll,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

before(async () => ({ mock, gw } = await startMockAndGateway()));
after(() => stopAll(gw, mock));

const chat = (body, opts) => postJson(gw.baseURL, CHAT, body, opts);

/** The request must not have reached the upstream. */
function assertNotForwarded(m) {
  assert.equal(mock.requestsContaining(m).length, 0, `request carrying ${m} reached the upstream`);
}

describe('malformed JSON', () => {
  test('truncated JSON -> 400 invalid_json', T, async () => {
    const r = await chat('{"model": "mock_model", "messages": [');
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
  });
  test('non-JSON text -> 400 invalid_json', T, async () => {
    const r = await chat('model=mock_model');
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
  });
  test('empty body -> 400 invalid_json', T, async () => {
    const r = await chat('');
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
  });
  test('same request as well-formed JSON -> 200', T, async () => {
    const r = await chat('{"model": "mock_model", "messages": [{"role": "user", "content": "hi"}]}');
    assertCompletion(r, { content: 'Hello from mock' });
  });
});

describe('invalid_type', () => {
  const cases = [
    ['model', 123],
    ['messages', 'hello'],
    ['temperature', 'hot'],
    ['top_p', 'high'],
    ['stream', 'yes'],
    ['seed', 'abc'],
    ['presence_penalty', 'none'],
    ['max_tokens', 'ten'],
    ['parallel_tool_calls', 'true'],
  ];
  for (const [field, value] of cases) {
    test(`${field} = ${JSON.stringify(value)} -> 400 invalid_type (param ${field})`, T, async () => {
      const m = marker('type');
      const body = chatBody(`hi ${m}`);
      body[field] = value;
      const r = await chat(body);
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_type', param: field });
      assertNotForwarded(m);
    });
  }
  test('a body that is a JSON array -> 400 (not 200, not 5xx)', T, async () => {
    const r = await chat('[1, 2]');
    assertError(r, { status: 400, type: 'invalid_request_error' });
  });
  test('well-typed optional fields -> 200', T, async () => {
    const r = await chat(chatBody('hi', {
      temperature: 0.5, top_p: 0.9, stream: false, seed: 7, presence_penalty: 0.1,
      max_tokens: 10, parallel_tool_calls: true,
    }));
    assertCompletion(r, { content: 'Hello from mock' });
  });
});

describe('missing required parameters', () => {
  test('no model -> 400 missing_required_parameter (param model)', T, async () => {
    const r = await chat({ messages: [{ role: 'user', content: 'hi' }] });
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter', param: 'model' });
  });
  test('no messages -> 400 missing_required_parameter (param messages)', T, async () => {
    const r = await chat({ model: 'mock_model' });
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter', param: 'messages' });
  });
  test('empty object -> 400 missing_required_parameter', T, async () => {
    const r = await chat({});
    assertError(r, { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter' });
  });
  test('only model and messages -> 200', T, async () => {
    assertCompletion(await chat({ model: 'mock_model', messages: [{ role: 'user', content: 'hi' }] }));
  });
});

describe('invalid_value', () => {
  const bad = [
    ['n = 2', { n: 2 }, 'n'],
    ['n = 0', { n: 0 }, 'n'],
    ['messages = []', { messages: [] }, 'messages'],
    ['max_tokens = -1', { max_tokens: -1 }, 'max_tokens'],
    ['max_completion_tokens = -5', { max_completion_tokens: -5 }, 'max_completion_tokens'],
    ['service_tier = "turbo"', { service_tier: 'turbo' }, 'service_tier'],
    ['service_tier = "AUTO"', { service_tier: 'AUTO' }, 'service_tier'],
    ['stop = "END" (bare string)', { stop: 'END' }, 'stop'],
    ['stop = [1, 2]', { stop: [1, 2] }, 'stop'],
    ['stop = ["a", null]', { stop: ['a', null] }, 'stop'],
    ['tollgate::episode_id not a UUID', { 'tollgate::episode_id': 'not-a-uuid' }, 'tollgate::episode_id'],
    ['tollgate::episode_id UUID with junk', { 'tollgate::episode_id': '123e4567-e89b-12d3-a456-426614174000x' }, 'tollgate::episode_id'],
    ['include_raw_usage while streaming without stream_options',
      { stream: true, 'tollgate::include_raw_usage': true }, 'tollgate::include_raw_usage'],
    ['include_raw_usage while streaming with include_usage false',
      { stream: true, stream_options: { include_usage: false }, 'tollgate::include_raw_usage': true }, 'tollgate::include_raw_usage'],
  ];
  for (const [name, extra, param] of bad) {
    test(`${name} -> 400 invalid_value (param ${param})`, T, async () => {
      const m = marker('value');
      const r = await chat(chatBody(`hi ${m}`, extra));
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param });
      assertNotForwarded(m);
    });
  }

  const good = [
    ['n = 1', { n: 1 }],
    ['max_tokens = 0', { max_tokens: 0 }],
    ['max_completion_tokens = 0', { max_completion_tokens: 0 }],
    ['service_tier = "default"', { service_tier: 'default' }],
    ['service_tier = "priority"', { service_tier: 'priority' }],
    ['service_tier = "flex"', { service_tier: 'flex' }],
    ['stop = ["END"]', { stop: ['END'] }],
    ['stop = []', { stop: [] }],
    ['tollgate::episode_id valid UUID', { 'tollgate::episode_id': '123e4567-e89b-12d3-a456-426614174000' }],
    ['include_raw_usage not streaming', { 'tollgate::include_raw_usage': true }],
  ];
  for (const [name, extra] of good) {
    test(`${name} -> 200`, T, async () => {
      const r = await chat(chatBody('hi', extra));
      assertCompletion(r, { content: 'Hello from mock' });
    });
  }

  test('service_tier is echoed (flex), default is "auto"', T, async () => {
    const a = assertCompletion(await chat(chatBody('hi', { service_tier: 'flex' })));
    assert.equal(a.service_tier, 'flex');
    const b = assertCompletion(await chat(chatBody('hi')));
    assert.equal(b.service_tier, 'auto');
  });

  test('tollgate::episode_id is echoed; a fresh UUID otherwise', T, async () => {
    const id = '0b7e3c2a-5f1d-4e8b-9a6c-1d2e3f4a5b6c';
    const a = assertCompletion(await chat(chatBody('hi', { 'tollgate::episode_id': id })));
    assert.equal(a.episode_id, id);
    const b = assertCompletion(await chat(chatBody('hi')));
    const c = assertCompletion(await chat(chatBody('hi')));
    assert.notEqual(b.episode_id, c.episode_id, 'episode ids of unrelated requests should differ');
  });

  test('include_raw_usage while streaming with stream_options.include_usage -> 200 stream', T, async () => {
    const res = await fetch(gw.baseURL + CHAT, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('hi', { stream: true, stream_options: { include_usage: true }, 'tollgate::include_raw_usage': true })),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const sse = await readSSE(res);
    assert.equal(sse.done, true);
    assert.equal(sse.content, 'Hello from mock');
  });
});

describe('tollgate::deny_unknown_fields', () => {
  test('true + unknown fields -> 400 unknown_parameter, names sorted, param = first', T, async () => {
    const m = marker('deny');
    const r = await chat(chatBody(`hi ${m}`, { zeta_field: 1, alpha_field: 2, 'tollgate::deny_unknown_fields': true }));
    const e = assertError(r, { status: 400, type: 'invalid_request_error', code: 'unknown_parameter', param: 'alpha_field' });
    const a = e.message.indexOf('alpha_field');
    const z = e.message.indexOf('zeta_field');
    assert.ok(a !== -1 && z !== -1, `message should name both fields: ${e.message}`);
    assert.ok(a < z, `unknown names should be listed sorted: ${e.message}`);
    assertNotForwarded(m);
  });
  test('true + one unknown field -> param names it', T, async () => {
    const r = await chat(chatBody('hi', { frobnicate: true, 'tollgate::deny_unknown_fields': true }));
    const e = assertError(r, { status: 400, code: 'unknown_parameter', param: 'frobnicate' });
    assert.match(e.message, /frobnicate/);
  });
  test('true + only known fields (incl. tollgate:: extensions) -> 200', T, async () => {
    const r = await chat(chatBody('hi', {
      'tollgate::deny_unknown_fields': true,
      'tollgate::tags': { source: 'tests' },
      'tollgate::dryrun': true,
      'tollgate::episode_id': '123e4567-e89b-12d3-a456-426614174000',
      'tollgate::include_raw_response': false,
      temperature: 0.2,
      stream_options: { include_usage: true },
      n: 1,
      service_tier: 'auto',
    }));
    assertCompletion(r, { content: 'Hello from mock' });
  });
  test('false + unknown fields -> 200', T, async () => {
    assertCompletion(await chat(chatBody('hi', { zeta_field: 1, 'tollgate::deny_unknown_fields': false })));
  });
  test('absent + unknown fields -> 200', T, async () => {
    assertCompletion(await chat(chatBody('hi', { zeta_field: 1, alpha_field: 'x' })));
  });
  test('tollgate::tags of the wrong shape or size -> 400 invalid_tags naming the tag', T, async () => {
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`t${i}`, 'v']));
    for (const [tags, param] of [
      [['a', 'b'], 'tollgate::tags'],
      ['playground', 'tollgate::tags'],
      [many, 'tollgate::tags'],
      [{ n: 1 }, 'tollgate::tags.n'],
      [{ k: 'x'.repeat(257) }, 'tollgate::tags.k'],
      [{ k: 'line\nbreak' }, 'tollgate::tags.k'],
      [{ 'tollgate::cost': '0' }, 'tollgate::tags.tollgate::cost'],
    ]) {
      const r = await chat(chatBody('hi', { 'tollgate::tags': tags }));
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_tags', param });
    }
    assertCompletion(await chat(chatBody('hi', { 'tollgate::tags': { source: 'playground', feature: 'é'.repeat(256) } })));
  });
  test('non-boolean deny_unknown_fields -> 400 invalid_type', T, async () => {
    const r = await chat(chatBody('hi', { 'tollgate::deny_unknown_fields': 'yes' }));
    assertError(r, { status: 400, code: 'invalid_type', param: 'tollgate::deny_unknown_fields' });
  });
});

describe('Authorization header', () => {
  test('accepted and ignored in open mode (with, without, odd value)', T, async () => {
    assertCompletion(await chat(chatBody('hi')));
    assertCompletion(await chat(chatBody('hi'), { headers: { authorization: 'Bearer sk-tollgate-whatever' } }));
    assertCompletion(await chat(chatBody('hi'), { headers: { authorization: 'garbage' } }));
  });
});
