// Upstream failures mapped to the error catalogue, timeouts, and fallback
// across the routing list.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { UPSTREAM_ERROR_MESSAGES } from '../fixtures/mock_upstream.mjs';
import {
  postJson, chatBody, marker, assertError, assertCompletion, waitFor, startMockAndGateway, stopAll,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

before(async () => ({ mock, gw } = await startMockAndGateway()));
after(() => stopAll(gw, mock));

const chat = (body) => postJson(gw.baseURL, CHAT, body);

describe('upstream error statuses', () => {
  for (const status of [500, 502, 503]) {
    test(`upstream ${status} -> 502 api_error upstream_error`, T, async () => {
      const r = await chat(chatBody(`mock:status=${status}`));
      assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
    });
  }

  test('upstream 429 -> 429 rate_limit_error upstream_rate_limited, message carries upstream message', T, async () => {
    const r = await chat(chatBody('mock:status=429'));
    const e = assertError(r, { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited' });
    assert.ok(e.message.includes(UPSTREAM_ERROR_MESSAGES[429]), `message: ${e.message}`);
  });

  for (const status of [400, 404, 422]) {
    test(`upstream ${status} -> 400 invalid_request_error upstream_invalid_request with upstream message`, T, async () => {
      const r = await chat(chatBody(`mock:status=${status}`));
      const e = assertError(r, { status: 400, type: 'invalid_request_error', code: 'upstream_invalid_request' });
      assert.equal(e.message, UPSTREAM_ERROR_MESSAGES[status]);
    });
  }

  test('upstream 200 with unparseable body -> 502 upstream_error', T, async () => {
    const r = await chat(chatBody('mock:garbage'));
    assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
  });

  test('upstream connection cut mid-body (non-streamed) -> 502 upstream_error', T, async () => {
    const r = await chat(chatBody('mock:cut'));
    assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
  });

  test('upstream 500 on a streamed request (before any byte) -> 502 JSON error, not a 200 stream', T, async () => {
    const r = await chat(chatBody('mock:status=500', { stream: true }));
    assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
  });

  test('upstream 429 on a streamed request -> 429 JSON error', T, async () => {
    const r = await chat(chatBody('mock:status=429', { stream: true }));
    assertError(r, { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited' });
  });

  test('the gateway is still healthy after upstream failures', T, async () => {
    assertCompletion(await chat(chatBody('hi')), { content: 'Hello from mock' });
  });
});

describe('upstream timeouts', () => {
  test('no first byte within first_byte_timeout_ms (500) -> 504 upstream_timeout, promptly', T, async () => {
    const m = marker('fbt');
    const t0 = Date.now();
    const r = await chat(chatBody(`mock:slow=3000 ${m}`, {}, 'quick_timeout_model'));
    const took = Date.now() - t0;
    assertError(r, { status: 504, type: 'api_error', code: 'upstream_timeout' });
    assert.ok(took >= 400, `gave up after ${took} ms, before the 500 ms first-byte timeout`);
    assert.ok(took < 2500, `took ${took} ms; first_byte_timeout_ms is 500`);
    assert.equal(mock.requestsContaining(m).length, 1);
  });

  test('the timed-out upstream request is abandoned (connection closed)', T, async () => {
    const before = mock.aborted;
    const r = await chat(chatBody('mock:slow=3000', {}, 'quick_timeout_model'));
    assert.equal(r.status, 504);
    await waitFor(() => mock.aborted > before, 3000);
  });

  test('same slowness within first_byte_timeout_ms -> 200', T, async () => {
    const r = await chat(chatBody('mock:slow=200', {}, 'quick_timeout_model'));
    assertCompletion(r, { model: 'quick_timeout_model', content: 'Hello from mock' });
  });

  test('whole answer not done within total_timeout_ms (800) -> 504 upstream_timeout', T, async () => {
    const t0 = Date.now();
    // Upstream sends headers at once but trickles the body over ~4 s.
    const r = await chat(chatBody('mock:stream-slow=200', {}, 'total_timeout_model'));
    const took = Date.now() - t0;
    assertError(r, { status: 504, type: 'api_error', code: 'upstream_timeout' });
    assert.ok(took < 3000, `took ${took} ms; total_timeout_ms is 800`);
  });

  test('a fast answer on the total-timeout model -> 200', T, async () => {
    assertCompletion(await chat(chatBody('hi', {}, 'total_timeout_model')), { model: 'total_timeout_model' });
  });

  test('streamed: no first byte within first_byte_timeout_ms -> 504 JSON error', T, async () => {
    const r = await chat(chatBody('mock:slow=3000', { stream: true }, 'quick_timeout_model'));
    assertError(r, { status: 504, type: 'api_error', code: 'upstream_timeout' });
  });
});

describe('connect failures and fallback', () => {
  test('only provider refuses connections -> 502 api_error upstream_unavailable', T, async () => {
    const t0 = Date.now();
    const r = await chat(chatBody('hi', {}, 'dead_model'));
    assertError(r, { status: 502, type: 'api_error', code: 'upstream_unavailable' });
    assert.ok(Date.now() - t0 < 3000, 'connect refusal should fail fast');
  });

  test('routing ["dead", "primary"]: falls back to primary -> 200', T, async () => {
    const m = marker('fb');
    const c = assertCompletion(await chat(chatBody(`hi ${m}`, {}, 'fallback_model')), { model: 'fallback_model', content: 'Hello from mock' });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(mock.requestsContaining(m).length, 1);
  });

  test('routing ["dead", "primary"], streamed: falls back -> 200 stream', T, async () => {
    const res = await fetch(gw.baseURL + CHAT, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('hi', { stream: true }, 'fallback_model')),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.includes('data: [DONE]'), text);
  });

  test('routing ["flaky" (503), "primary"]: 5xx falls back to the next provider -> 200', T, async () => {
    const m = marker('flaky');
    assertCompletion(await chat(chatBody(`hi ${m}`, {}, 'flaky_fallback_model')), { model: 'flaky_fallback_model', content: 'Hello from mock' });
    const seen = mock.requestsContaining(m).map((r) => r.body.model);
    assert.deepEqual(seen, ['flaky mock:status=503', 'upstream-model'], 'providers tried in routing order');
  });

  test('routing ["first", "second"]: upstream 5xx on both -> both tried, then 502', T, async () => {
    const m = marker('both5xx');
    const r = await chat(chatBody(`mock:status=500 ${m}`, {}, 'double_model'));
    assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
    assert.deepEqual(mock.requestsContaining(m).map((x) => x.body.model), ['first-upstream', 'second-upstream']);
  });

  test('routing ["first", "second"]: upstream 4xx is not retried on the next provider', T, async () => {
    const m = marker('no4xx');
    const r = await chat(chatBody(`mock:status=400 ${m}`, {}, 'double_model'));
    assertError(r, { status: 400, code: 'upstream_invalid_request' });
    assert.deepEqual(mock.requestsContaining(m).map((x) => x.body.model), ['first-upstream']);
  });

  test('routing ["first", "second"]: success on first -> second never called', T, async () => {
    const m = marker('first');
    assertCompletion(await chat(chatBody(`hi ${m}`, {}, 'double_model')), { model: 'double_model' });
    assert.deepEqual(mock.requestsContaining(m).map((x) => x.body.model), ['first-upstream']);
  });
});
