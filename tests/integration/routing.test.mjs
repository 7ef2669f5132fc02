// Routing against mock upstreams that count attempts: retries with backoff and Retry-After, when
// a failure is not retried, circuit breakers (and their state in /ready), failover of a stream
// before its first event, the request's deadline, and functions with their variants (drawn per
// episode, pinned, fallen back to, named in the answer and in the spend row).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { ENGINES } from '../fixtures/engines.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, getJson, chatBody, assertError,
  readSSE, adminOf, sleep,
} from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };

/** A chat model whose providers are OpenAI-compatible ones at the mock, named by `upstreams`
 * (upstream model names carrying mock directives), tried in that order. */
function model(apiBase, upstreams, extra = {}, provider = {}) {
  const names = upstreams.map((_, i) => `p${i + 1}`);
  return {
    routing: names,
    providers: Object.fromEntries(upstreams.map((up, i) => [names[i], openaiProvider(apiBase, { model: up, ...provider })])),
    ...extra,
  };
}

describe('retries, breakers, failover and deadlines', () => {
  let mock;
  let gw;
  const attempts = (upstream) => mock.requests.filter((r) => r.body?.model === upstream);
  const chat = (m, extra = {}) => postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', extra, m));
  const streamChat = (m) => fetch(`${gw.baseURL}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('hi', { stream: true }, m)),
  });

  before(async () => {
    mock = await startMock();
    const base = mock.url;
    const retries = (num_retries, max_delay_ms) => ({ retries: { num_retries, max_delay_ms } });
    gw = await startGateway({
      config: {
        gateway: { ...GATEWAY_DEFAULTS },
        models: {
          flaky: model(base, ['a mock:fail-first=2 mock:status=503'], retries(2, 50)),
          down: model(base, ['b mock:status=503', 'b-ok'], retries(1, 50)),
          polite: model(base, ['c mock:fail-first=1 mock:status=429 mock:retry-after=1'], retries(2, 2000)),
          impatient: model(base, ['d mock:status=429 mock:retry-after=30', 'd-ok'], retries(3, 500)),
          limited: model(base, ['k mock:status=429 mock:retry-after=30'], retries(3, 500)),
          refused: model(base, ['e mock:status=400', 'e-ok'], retries(3, 50)),
          broken: model(base, ['f mock:status=500', 'f-ok'], {},
            { circuit_breaker: { failures: 2, cooldown_ms: 1500 } }),
          cut: model(base, ['g mock:cut-first', 'g-ok']),
          stalled: model(base, ['h mock:stall-first=5000', 'h-ok'], { timeouts: { streaming_first_token_ms: 300 } }),
          midway: model(base, ['i mock:stream-error', 'i-ok']),
          slow: model(base, ['j mock:slow=3000', 'j-ok'], { ...retries(5, 50), timeouts: { non_streaming_total_ms: 500 } }),
          // The same upstream, so the hasty call reuses the patient one's pooled connection.
          patient: model(base, ['m-ok'], { timeouts: { non_streaming_total_ms: 20000 } }),
          hasty: model(base, ['m mock:slow=3000'], { timeouts: { non_streaming_total_ms: 400 } }),
        },
      },
    });
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('a 503 is retried on the same provider until it answers', T, async () => {
    const r = await chat('flaky');
    assert.equal(r.status, 200, r.text);
    assert.equal(attempts('a mock:fail-first=2 mock:status=503').length, 3);
  });

  test('retries are bounded; then the next provider answers', T, async () => {
    const r = await chat('down');
    assert.equal(r.status, 200, r.text);
    assert.equal(attempts('b mock:status=503').length, 2);
    assert.equal(attempts('b-ok').length, 1);
  });

  test("a 429's Retry-After is waited for when within max_delay_ms", T, async () => {
    const r = await chat('polite');
    assert.equal(r.status, 200, r.text);
    const tries = attempts('c mock:fail-first=1 mock:status=429 mock:retry-after=1');
    assert.equal(tries.length, 2);
    assert.ok(tries[1].at - tries[0].at >= 950, `retried after ${tries[1].at - tries[0].at} ms`);
  });

  test('a Retry-After longer than max_delay_ms fails over at once', T, async () => {
    const t0 = Date.now();
    const r = await chat('impatient');
    assert.equal(r.status, 200, r.text);
    assert.equal(attempts('d mock:status=429 mock:retry-after=30').length, 1);
    assert.equal(attempts('d-ok').length, 1);
    assert.ok(Date.now() - t0 < 2000);
  });

  test("when the last provider is rate-limited, the client gets 429 with the upstream's Retry-After", T, async () => {
    const r = await chat('limited');
    assertError(r, { status: 429, code: 'upstream_rate_limited' });
    assert.equal(r.headers.get('retry-after'), '30');
    assert.equal(attempts('k mock:status=429 mock:retry-after=30').length, 1);
  });

  test("the client's own mistake is neither retried nor failed over", T, async () => {
    assertError(await chat('refused'), { status: 400, code: 'upstream_invalid_request' });
    assert.equal(attempts('e mock:status=400').length, 1);
    assert.equal(attempts('e-ok').length, 0);
  });

  test('a failing provider is skipped once its breaker opens, then probed once after the cooldown', T, async () => {
    const failing = 'f mock:status=500';
    for (let i = 0; i < 5; i++) assert.equal((await chat('broken')).status, 200);
    assert.equal(attempts(failing).length, 2, 'tried until the breaker opened, then skipped');
    assert.equal(attempts('f-ok').length, 5);
    const ready = await getJson(gw.baseURL, '/ready');
    const state = ready.json.providers.find((p) => p.model === 'broken' && p.provider === 'p1');
    assert.equal(state.state, 'open');
    assert.equal(state.consecutive_failures, 2);
    assert.ok(state.open_for_ms > 0 && state.open_for_ms <= 1500);
    await sleep(1600);
    const burst = await Promise.all([chat('broken'), chat('broken'), chat('broken')]);
    assert.deepEqual(burst.map((r) => r.status), [200, 200, 200]);
    assert.equal(attempts(failing).length, 3, 'one probe, not one per request');
    const after = (await getJson(gw.baseURL, '/ready')).json.providers.find((p) => p.model === 'broken' && p.provider === 'p1');
    assert.equal(after.state, 'open');
  });

  test('a stream cut before its first event fails over; the client sees one clean stream', T, async () => {
    const res = await streamChat('cut');
    assert.equal(res.status, 200);
    const sse = await readSSE(res);
    assert.ok(sse.done);
    assert.equal(sse.error, undefined);
    assert.equal(sse.content, 'Hello from mock');
    assert.equal(attempts('g-ok').length, 1);
  });

  test('a stream stalled before its first event fails over after streaming_first_token_ms', T, async () => {
    const t0 = Date.now();
    const res = await streamChat('stalled');
    assert.equal(res.status, 200);
    const sse = await readSSE(res);
    assert.ok(sse.done);
    assert.equal(sse.content, 'Hello from mock');
    const took = Date.now() - t0;
    assert.ok(took >= 280 && took < 2000, `took ${took} ms`);
    assert.equal(attempts('h-ok').length, 1);
  });

  test('a stream that fails after its first event ends with the error event; nothing else is tried', T, async () => {
    const res = await streamChat('midway');
    assert.equal(res.status, 200);
    const sse = await readSSE(res);
    assert.ok(!sse.done);
    assert.ok(sse.chunks.length > 0);
    assert.ok(sse.error);
    assert.equal(attempts('i-ok').length, 0);
  });

  test("one deadline for the whole request: the model's total time limit ends it with 504", T, async () => {
    const t0 = Date.now();
    assertError(await chat('slow'), { status: 504, code: 'upstream_timeout' });
    const took = Date.now() - t0;
    assert.ok(took >= 450 && took < 1500, `took ${took} ms`);
    assert.equal(attempts('j mock:slow=3000').length, 1);
    assert.equal(attempts('j-ok').length, 0);
  });

  test('a call on a reused connection keeps its own deadline, shorter than the last call\'s', T, async () => {
    assert.equal((await chat('patient')).status, 200);
    const t0 = Date.now();
    assertError(await chat('hasty'), { status: 504, code: 'upstream_timeout' });
    const took = Date.now() - t0;
    assert.ok(took >= 350 && took < 1500, `took ${took} ms`);
    // Both calls went over one connection: the patient call's deadline was armed on it.
    const [patient, hasty] = [attempts('m-ok')[0], attempts('m mock:slow=3000')[0]];
    assert.ok(patient && hasty);
    assert.equal(hasty.remotePort, patient.remotePort, 'the hasty call did not reuse the connection');
  });
});

describe('functions and variants', () => {
  let mock;
  let gw;
  let key;
  let store;
  const { keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
  const call = (body) => postJson(gw.baseURL, '/v1/chat/completions', body, { headers: { authorization: `Bearer ${key}` } });
  const fn = (name, extra = {}, content = 'hi') => chatBody(content, extra, `tollgate::function_name::${name}`);

  before(async () => {
    mock = await startMock();
    store = await ENGINES[0].start();
    const base = mock.url;
    const priced = { input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 };
    gw = await startGateway({
      config: {
        gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
        storage: store.storage,
        models: {
          fa: model(base, ['fa-up'], priced),
          fb: model(base, ['fb-up'], priced),
          fc: model(base, ['fc-up'], priced),
          fx: model(base, ['fx-up mock:status=500'], priced),
        },
        functions: {
          support_bot: {
            fallback_variants: ['c'],
            variants: {
              a: { model: 'fa', weight: 1, system_prompt: 'You are terse.', temperature: 0.3 },
              b: { model: 'fb', weight: 1 },
              c: { model: 'fc' },
            },
          },
          other: { variants: { only: { model: 'fa', weight: 1 } } },
          fallback_fn: { fallback_variants: ['y'], variants: { x: { model: 'fx', weight: 1 }, y: { model: 'fc' } } },
        },
      },
      env: store.env,
    });
    key = await keyFor('routing', '10');
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
    store?.stop();
  });

  test('new episodes are spread over the weighted variants; one episode stays on one', T, async () => {
    const seen = new Set();
    for (let i = 0; i < 16; i++) {
      const r = await call(fn('support_bot'));
      assert.equal(r.status, 200, r.text);
      assert.match(r.json.episode_id, /^[0-9a-f-]{36}$/);
      seen.add(r.json.variant_name);
    }
    assert.deepEqual([...seen].sort(), ['a', 'b']);
    const episode = '0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
    const names = new Set();
    for (let i = 0; i < 6; i++) {
      const r = await call(fn('support_bot', { 'tollgate::episode_id': episode }));
      assert.equal(r.json.episode_id, episode);
      names.add(r.json.variant_name);
    }
    assert.equal(names.size, 1);
  });

  test("a variant's system prompt and defaults reach the upstream; the client's values win", T, async () => {
    const r = await call(fn('support_bot', { 'tollgate::variant_name': 'a', temperature: 1.5 }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.variant_name, 'a');
    const up = mock.requests.at(-1).body;
    assert.equal(up.model, 'fa-up');
    assert.deepEqual(up.messages[0], { role: 'system', content: 'You are terse.' });
    assert.equal(up.messages[1].role, 'user');
    assert.equal(up.temperature, 1.5);
    assert.deepEqual(Object.keys(up).filter((k) => k.startsWith('tollgate::')), []);
    await call(fn('support_bot', { 'tollgate::variant_name': 'a' }));
    assert.equal(mock.requests.at(-1).body.temperature, 0.3);
  });

  test('a pinned variant is the only one tried, a fallback one included', T, async () => {
    const r = await call(fn('support_bot', { 'tollgate::variant_name': 'c' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.variant_name, 'c');
    assert.equal(mock.requests.at(-1).body.model, 'fc-up');
  });

  test("an unknown variant, or another function's, is 404 variant_not_found", T, async () => {
    for (const [name, variant] of [['support_bot', 'zzz'], ['support_bot', 'only'], ['other', 'a']]) {
      assertError(await call(fn(name, { 'tollgate::variant_name': variant })),
        { status: 404, code: 'variant_not_found', param: 'tollgate::variant_name' });
    }
    assertError(await call(chatBody('hi', { 'tollgate::variant_name': 'a' }, 'fa')),
      { status: 404, code: 'variant_not_found' });
    assertError(await call(fn('nope')), { status: 404, code: 'model_not_found' });
  });

  test('every chunk of a streamed function call names its variant', T, async () => {
    const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(fn('support_bot', { stream: true, 'tollgate::variant_name': 'b' })),
    });
    const sse = await readSSE(res);
    assert.ok(sse.done);
    assert.ok(sse.chunks.length > 2);
    for (const c of sse.chunks) assert.equal(c.variant_name, 'b');
  });

  test('when the candidates fail, the fallback variant answers, and the spend row names it', T, async () => {
    const r = await call(fn('fallback_fn'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.variant_name, 'y');
    const rows = await spend('routing');
    const row = rows.find((s) => s.request_id === r.headers.get('x-request-id'));
    assert.ok(row, JSON.stringify(rows.slice(0, 2)));
    assert.equal(row.variant, 'y');
    assert.equal(row.model, 'fc');
    const plain = await call(chatBody('hi', {}, 'fa'));
    assert.equal(plain.json.variant_name, undefined);
  });
});
