// Seeing a gateway run: `tollgate --version`; W3C trace context (a caller's traceparent
// continued, a malformed one replaced, each upstream attempt sent its own span); the spans of an
// exchange and its attempts exported over OTLP/HTTP JSON to a collector (here a test server that
// decodes them); the access log's trace id, tokens, cost, cache and Idempotency-Key outcomes and
// upstream attempts; and [log] format = "json" for the gateway's other stderr lines.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, marker, waitFor,
  runTollgate, openaiProvider, readSSE, UPSTREAM_KEY, UPSTREAM_KEY_ENV,
} from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const COLLECTOR_SECRET = 'Bearer collector-secret-7f3a';
const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** A fresh trace id for one test (valid: lower-case hex, not zeros). */
const newTrace = () => `${marker('t').replace(/[^0-9a-f]/g, '')}${'a'.repeat(32)}`.slice(0, 32);

/** An OTLP/HTTP collector: every span of every batch POSTed to /v1/traces, with its request. */
async function startCollector() {
  const batches = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      batches.push({ url: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const spans = () => batches.flatMap((b) => b.body.resourceSpans.flatMap(
    (r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, resource: r.resource })))));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    batches,
    spans,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** A span's attributes as {key: value} (intValue as the string OTLP's JSON writes). */
const attrs = (span) => Object.fromEntries(span.attributes.map(
  (a) => [a.key, a.value.stringValue ?? a.value.intValue]));

/** A chat model served by one provider, p1, at the mock whose upstream model is `upstream`, with
 * one retry. */
function retriedModel(apiBase, upstream) {
  return {
    input_cost_per_token: 0.000001,
    output_cost_per_token: 0.000002,
    routing: ['p1'],
    retries: { num_retries: 1, max_delay_ms: 20 },
    providers: { p1: openaiProvider(apiBase, { model: upstream, api_key: `env::${UPSTREAM_KEY_ENV}` }) },
  };
}

test('tollgate --version names the version and the commit', T, async () => {
  const r = await runTollgate(['--version']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^tollgate \d+\.\d+\.\d+ \([0-9a-f]{7,}\)\n$/);
});

describe('trace context, span export and the access log', () => {
  let mock;
  let collector;
  let gw;
  let key;
  const { keyFor } = adminOf(() => ({
    configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome, TRACE_TEST_AUTH: COLLECTOR_SECRET },
  }));
  const upstreamCalls = (upstream) => mock.requests.filter((r) => r.body?.model === upstream);
  const logLines = (from) => gw.stderr.slice(from).split('\n')
    .map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
  const logged = async (from, requestId) => {
    await waitFor(() => logLines(from).some((l) => l.request_id === requestId), 3000);
    return logLines(from).find((l) => l.request_id === requestId);
  };
  const chat = (body, headers = {}) => postJson(gw.baseURL, '/v1/chat/completions', body,
    { headers: { authorization: `Bearer ${key}`, ...headers } });

  before(async () => {
    mock = await startMock();
    collector = await startCollector();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, {
      gateway: { auth: 'required' },
      models: {
        retry_whole: retriedModel(mock.url, 'rw mock:fail-first=1 mock:status=503'),
        retry_stream: retriedModel(mock.url, 'rs mock:fail-first=1 mock:status=503'),
        kept_model: retriedModel(mock.url, 'kept'),
        cached_model: retriedModel(mock.url, 'ck mock:cached=600'),
      },
    });
    config.traces = { endpoint: `${collector.url}/v1/traces`, headers: { Authorization: 'env::TRACE_TEST_AUTH' } };
    gw = await startGateway({ config, env: { TRACE_TEST_AUTH: COLLECTOR_SECRET } });
    key = await keyFor('traced', '10');
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
    await collector?.close();
  });

  test('each upstream attempt is sent its own span in the caller\'s trace', T, async () => {
    const from = gw.stderr.length;
    const r = await chat(chatBody(marker('tp'), {}, 'retry_whole'), {
      traceparent: `00-${TRACE}-${PARENT_SPAN}-01`, tracestate: 'vendor=abc,other=x y',
    });
    assert.equal(r.status, 200, r.text);
    const calls = upstreamCalls('rw mock:fail-first=1 mock:status=503');
    assert.equal(calls.length, 2);
    const sent = calls.map((c) => c.headers.traceparent.match(TRACEPARENT_RE));
    for (const m of sent) {
      assert.ok(m, `not a traceparent: ${JSON.stringify(calls.map((c) => c.headers.traceparent))}`);
      assert.equal(m[1], TRACE);
      assert.equal(m[3], '01');
      assert.notEqual(m[2], PARENT_SPAN);
    }
    assert.notEqual(sent[0][2], sent[1][2], 'the retry was sent the first attempt\'s span');
    assert.deepEqual(calls.map((c) => c.headers.tracestate), ['vendor=abc,other=x y', 'vendor=abc,other=x y']);

    const line = await logged(from, r.headers.get('x-request-id'));
    assert.equal(line.trace_id, TRACE);
    assert.equal(line.upstream_attempts.length, 2);
    const [failed, answered] = line.upstream_attempts;
    assert.equal(failed.provider, 'p1');
    assert.equal(failed.status, undefined);
    assert.equal(typeof failed.error, 'string');
    assert.ok(failed.error.startsWith('upstream_'), failed.error);
    assert.equal(answered.status, 200);
    assert.equal(answered.error, undefined);
    assert.ok(answered.first_byte_ms >= 0 && answered.first_byte_ms <= answered.total_ms, JSON.stringify(answered));
  });

  test('a malformed or absent traceparent starts a new trace, sampled', T, async () => {
    const cases = [
      { traceparent: `00-${TRACE.toUpperCase()}-${PARENT_SPAN}-01`, tracestate: 'vendor=abc' },
      { traceparent: `00-${'0'.repeat(32)}-${PARENT_SPAN}-01` },
      { traceparent: `00-${TRACE}-${PARENT_SPAN}-01-extra` },
      {},
    ];
    for (const headers of cases) {
      const from = gw.stderr.length;
      const m = marker('new');
      const r = await chat(chatBody(m), headers);
      assert.equal(r.status, 200, r.text);
      const upstream = mock.requests.find((q) => q.rawBody?.includes(m));
      const sent = upstream.headers.traceparent.match(TRACEPARENT_RE);
      assert.ok(sent, upstream.headers.traceparent);
      assert.notEqual(sent[1], TRACE, JSON.stringify(headers));
      assert.equal(sent[3], '01');
      assert.equal(upstream.headers.tracestate, undefined);
      const line = await logged(from, r.headers.get('x-request-id'));
      assert.equal(line.trace_id, sent[1]);
    }
  });

  test('the collector gets the spans of a streamed request whose first attempt was retried', T, async () => {
    const trace = newTrace();
    const m = marker('span-secret-prompt');
    const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', authorization: `Bearer ${key}`,
        traceparent: `00-${trace}-${PARENT_SPAN}-01`, 'idempotency-key': `idem-${m}`,
      },
      body: JSON.stringify(chatBody(m, { stream: true, stream_options: { include_usage: true } }, 'retry_stream')),
    });
    assert.equal(res.status, 200);
    await readSSE(res);
    const sentSpans = upstreamCalls('rs mock:fail-first=1 mock:status=503')
      .map((c) => c.headers.traceparent.match(TRACEPARENT_RE)[2]);
    assert.equal(sentSpans.length, 2);

    // Batches leave every 5 s.
    await waitFor(() => collector.spans().filter((s) => s.traceId === trace).length >= 3, 9000, 100);
    const spans = collector.spans().filter((s) => s.traceId === trace);
    assert.equal(spans.length, 3);
    const server = spans.find((s) => s.kind === 2);
    assert.ok(server, JSON.stringify(spans));
    assert.equal(server.parentSpanId, PARENT_SPAN);
    assert.equal(server.name, 'chat retry_stream');
    const a = attrs(server);
    assert.equal(a['gen_ai.operation.name'], 'chat');
    assert.equal(a['gen_ai.request.model'], 'retry_stream');
    // The model the upstream's chunks named (the mock names the one it was asked for), which our
    // answer never shows.
    assert.equal(a['gen_ai.response.model'], 'rs mock:fail-first=1 mock:status=503');
    assert.equal(a['gen_ai.provider.name'], 'p1');
    assert.equal(a['http.response.status_code'], '200');
    assert.equal(a['gen_ai.usage.input_tokens'], '12');
    assert.equal(a['gen_ai.usage.output_tokens'], '4');
    assert.equal(a['error.type'], undefined);

    const clients = spans.filter((s) => s.kind === 3)
      .sort((x, y) => Number(BigInt(x.startTimeUnixNano) - BigInt(y.startTimeUnixNano)));
    assert.equal(clients.length, 2);
    assert.deepEqual(clients.map((s) => s.spanId), sentSpans);
    for (const c of clients) {
      assert.equal(c.parentSpanId, server.spanId);
      assert.ok(BigInt(c.startTimeUnixNano) >= BigInt(server.startTimeUnixNano));
      assert.ok(BigInt(c.endTimeUnixNano) <= BigInt(server.endTimeUnixNano));
      const ca = attrs(c);
      assert.equal(ca['gen_ai.request.model'], 'retry_stream');
      assert.equal(ca['gen_ai.provider.name'], 'p1');
      assert.equal(ca['server.address'], '127.0.0.1');
      assert.equal(ca['server.port'], String(new URL(mock.url).port));
    }
    assert.ok(attrs(clients[0])['error.type'].startsWith('upstream_'));
    assert.equal(clients[0].status.code, 2);
    assert.equal(attrs(clients[1])['http.response.status_code'], '200');
    assert.equal(attrs(clients[0])['gen_ai.response.model'], undefined);
    assert.equal(attrs(clients[1])['gen_ai.response.model'], 'rs mock:fail-first=1 mock:status=503');
    assert.equal(attrs(server.resource)['service.name'], 'tollgate');

    const batch = collector.batches.find((b) => b.body.resourceSpans.some(
      (r) => r.scopeSpans.some((s) => s.spans.some((x) => x.traceId === trace))));
    assert.equal(batch.url, '/v1/traces');
    assert.equal(batch.headers['content-type'], 'application/json');
    assert.equal(batch.headers.authorization, COLLECTOR_SECRET);
    // Neither the prompt nor the answer, nor a credential or the Idempotency-Key.
    const text = JSON.stringify(batch.body);
    for (const secret of [m, 'Hello', key, UPSTREAM_KEY, COLLECTOR_SECRET, `idem-${m}`]) {
      assert.ok(!text.includes(secret), `a span carries ${secret}`);
    }
    assert.ok(!gw.stderr.includes(COLLECTOR_SECRET), 'the collector\'s credential was logged');
  });

  test('a caller\'s unsampled trace is not exported', T, async () => {
    const unsampled = newTrace();
    const sampled = `${unsampled.slice(0, 31)}${unsampled[31] === 'b' ? 'c' : 'b'}`;
    let r = await chat(chatBody(marker('off')), { traceparent: `00-${unsampled}-${PARENT_SPAN}-00` });
    assert.equal(r.status, 200, r.text);
    const upstream = mock.requests.at(-1);
    assert.match(upstream.headers.traceparent, new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    r = await chat(chatBody(marker('on')), { traceparent: `00-${sampled}-${PARENT_SPAN}-01` });
    assert.equal(r.status, 200, r.text);
    // The queue keeps its order: once the later exchange is in, the earlier would be too.
    await waitFor(() => collector.spans().some((s) => s.traceId === sampled), 9000, 100);
    assert.equal(collector.spans().filter((s) => s.traceId === unsampled).length, 0);
  });

  test('the access log has the tokens, cost, cache and Idempotency-Key outcomes', T, async () => {
    const m = marker('log');
    const from = gw.stderr.length;
    const idem = { 'idempotency-key': `idem-${m}` };
    const first = await chat(chatBody(m, {}, 'kept_model'), idem);
    assert.equal(first.status, 200, first.text);
    const again = await chat(chatBody(m, {}, 'kept_model'), idem);
    assert.equal(again.status, 200, again.text);
    const other = await chat(chatBody(`${m}-other`, {}, 'kept_model'), idem);
    assert.equal(other.status, 422, other.text);
    // A ZDR model's answer is not kept for a retry.
    const zdrIdem = { 'idempotency-key': `idem-zdr-${m}` };
    assert.equal((await chat(chatBody(`${m}-zdr`), zdrIdem)).status, 200);
    const notKept = await chat(chatBody(`${m}-zdr`), zdrIdem);
    assert.equal(notKept.status, 410, notKept.text);
    const cached = { 'tollgate::cache_options': { enabled: 'on' } };
    const miss = await chat(chatBody(`${m}-c`, cached, 'kept_model'));
    assert.equal(miss.status, 200, miss.text);
    const hit = await chat(chatBody(`${m}-c`, cached, 'kept_model'));
    assert.equal(hit.status, 200, hit.text);

    // Long enough a prompt for the mock's 1000 prompt tokens to be believed.
    const kinds = await chat(chatBody(`${m}-kinds ${'x'.repeat(1200)}`, {}, 'cached_model'));
    assert.equal(kinds.status, 200, kinds.text);

    const kindsLine = await logged(from, kinds.headers.get('x-request-id'));
    assert.equal(kindsLine.prompt_tokens, 1000);
    assert.equal(kindsLine.completion_tokens, 40);
    assert.equal(kindsLine.cached_tokens, 600);
    assert.equal(kindsLine.reasoning_tokens, 30);
    assert.equal(kindsLine.audio_prompt_tokens, undefined);
    const claimed = await logged(from, first.headers.get('x-request-id'));
    assert.equal(claimed.idempotency, 'claimed');
    assert.equal(claimed.cache, 'off');
    assert.equal(claimed.prompt_tokens, 12);
    assert.equal(claimed.completion_tokens, 4);
    assert.equal(claimed.cost, 0.00002);  // 12 × 0.000001 + 4 × 0.000002 USD
    assert.equal(claimed.upstream_attempts.length, 1);
    assert.equal(claimed.upstream_attempts[0].provider, 'p1');
    assert.equal(claimed.upstream_attempts[0].status, 200);
    assert.equal(claimed.cached_tokens, undefined);  // Only the kinds that are not zero.
    const replayed = await logged(from, again.headers.get('x-request-id'));
    assert.equal(replayed.idempotency, 'replayed');
    assert.equal(replayed.upstream_attempts, undefined);
    assert.equal((await logged(from, other.headers.get('x-request-id'))).idempotency, 'conflict');
    assert.equal((await logged(from, notKept.headers.get('x-request-id'))).idempotency, 'not_kept');
    assert.equal((await logged(from, miss.headers.get('x-request-id'))).cache, 'miss');
    const hitLine = await logged(from, hit.headers.get('x-request-id'));
    assert.equal(hitLine.cache, 'hit');
    assert.equal(hitLine.idempotency, undefined);
    const health = await fetch(`${gw.baseURL}/health`);
    await health.arrayBuffer();
    const healthLine = await logged(from, health.headers.get('x-request-id'));
    assert.equal(healthLine.cache, undefined);
    assert.match(healthLine.trace_id, /^[0-9a-f]{32}$/);
    const written = gw.stderr.slice(from);
    assert.ok(!written.includes(key), 'an API key was logged');
    assert.ok(!written.includes(`idem-${m}`) && !written.includes(`idem-zdr-${m}`), 'an Idempotency-Key was logged');
  });
});

test('a collector that never answers costs neither requests nor shutdown their time', { timeout: 30_000 }, async () => {
  const mock = await startMock();
  let posted = 0;
  const silent = http.createServer((req) => { posted += 1; req.resume(); });  // Never answers.
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = standardConfig(mock.url, dead);
  config.traces = { endpoint: `http://127.0.0.1:${silent.address().port}` };
  const gw = await startGateway({ config });
  try {
    for (let i = 0; i < 3; i += 1) {
      const t0 = Date.now();
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(marker('silent')));
      assert.equal(r.status, 200, r.text);
      assert.ok(Date.now() - t0 < 1000);
    }
    await waitFor(() => posted > 0, 8000, 100);  // A batch is waiting on the collector.
    const t0 = Date.now();
    const exit = await gw.stop();
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(Date.now() - t0 < 5000, `stopping took ${Date.now() - t0} ms`);
  } finally {
    await gw.kill();
    await mock.close();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});

describe('[log] format', () => {
  /** Reloads `gw` and resolves the stderr written until its reload line appeared. */
  const reload = async (gw, pattern) => {
    const from = gw.stderr.length;
    process.kill(gw.pid, 'SIGHUP');
    await waitFor(() => pattern.test(gw.stderr.slice(from)), 5000);
    return gw.stderr.slice(from);
  };

  test('"json" writes the gateway\'s other lines as JSON objects', T, async () => {
    const mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead);
    config.log = { format: 'json' };
    const gw = await startGateway({ config });
    try {
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'));
      assert.equal(r.status, 200, r.text);
      await waitFor(() => gw.stderr.includes(r.headers.get('x-request-id')), 3000);
      await reload(gw, /reloaded configuration/);
      const lines = gw.stderr.split('\n').filter((l) => l.length > 0);
      assert.ok(lines.length >= 2, gw.stderr);
      for (const l of lines) {
        assert.doesNotThrow(() => JSON.parse(l), `not JSON: ${l}`);
      }
      const reloaded = lines.map((l) => JSON.parse(l)).find((o) => o.msg?.startsWith('reloaded configuration'));
      assert.ok(reloaded, gw.stderr);
      assert.equal(reloaded.level, 'info');
      assert.equal(typeof reloaded.ts_ms, 'number');
      assert.ok(Math.abs(reloaded.ts_ms - Date.now()) < 60_000);
    } finally {
      await gw.stop();
      await mock.close();
    }
  });

  test('"text", the default, keeps its lines', T, async () => {
    const mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const gw = await startGateway({ config: standardConfig(mock.url, dead) });
    try {
      const written = await reload(gw, /reloaded configuration/);
      assert.match(written, /^tollgate: reloaded configuration [0-9a-f]{16} \(was [0-9a-f]{16}\)$/m);
    } finally {
      await gw.stop();
      await mock.close();
    }
  });
});
