// The one request path every endpoint shares: a request id on every answer (and forwarded
// upstream, and logged), GET /v1/models/{id}, and body limits that belong to each route.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, postJson, getJson, chatBody, marker, waitFor,
  assertError, UUID_RE, rawConnect,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
let mock;
let gw;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  gw = await startGateway({ config: standardConfig(mock.url, dead) });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

/** The access-log lines written since `from` (an offset into stderr). */
function logLines(from) {
  return gw.stderr.slice(from).split('\n')
    .map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
}

describe('x-request-id', () => {
  test('every answer carries a fresh one: success, error, refusal before routing', T, async () => {
    const seen = new Set();
    const answers = [
      await getJson(gw.baseURL, '/health'),
      await getJson(gw.baseURL, '/v1/models'),
      await getJson(gw.baseURL, '/v1/nope'),
      await postJson(gw.baseURL, '/v1/chat/completions', { model: 'nope', messages: [] }),
      await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi')),
    ];
    for (const r of answers) {
      const id = r.headers.get('x-request-id');
      assert.match(id ?? '', UUID_RE, `status ${r.status}: ${id}`);
      assert.ok(!seen.has(id), `repeated request id ${id}`);
      seen.add(id);
    }
  });

  test('a streamed answer carries it too', T, async () => {
    const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('hi', { stream: true })),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-request-id') ?? '', UUID_RE);
    await res.text();
  });

  test('the upstream and the access log get the same id the client got', T, async () => {
    const m = marker('rid');
    const from = gw.stderr.length;
    const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(m));
    assert.equal(r.status, 200, r.text);
    const id = r.headers.get('x-request-id');
    const upstream = mock.requests.find((q) => q.rawBody?.includes(m));
    assert.ok(upstream, 'the mock saw no request');
    assert.equal(upstream.headers['x-request-id'], id);
    await waitFor(() => logLines(from).some((l) => l.request_id === id), 3000);
    const line = logLines(from).find((l) => l.request_id === id);
    assert.equal(line.status, 200);
    assert.equal(line.model, 'mock_model');
    assert.equal(typeof line.provider, 'string');
    assert.ok(line.provider.length > 0, JSON.stringify(line));
  });

  test('a request refused while its head is read is logged with its id', T, async () => {
    const from = gw.stderr.length;
    const sock = await rawConnect(gw.port);
    await sock.write('GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n');
    const reply = await sock.read();
    sock.close();
    assert.equal(reply?.status, 400);
    const id = reply.headers.get('x-request-id');
    assert.match(id ?? '', UUID_RE);
    await waitFor(() => logLines(from).some((l) => l.request_id === id), 3000);
  });
});

describe('GET /v1/models/{id}', () => {
  test('returns the same item as the list, for every model', T, async () => {
    const list = await getJson(gw.baseURL, '/v1/models');
    assert.equal(list.status, 200);
    for (const item of list.json.data) {
      const r = await getJson(gw.baseURL, `/v1/models/${item.id}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, item);
    }
  });

  for (const id of ['gpt-4o-mini', 'nope', 'MOCK_MODEL', 'openai%2Fgpt-4o', 'openai/gpt-4o', 'tollgate::model_name::mock_model', '%ZZ']) {
    test(`${id} -> 404 model_not_found`, T, async () => {
      const r = await getJson(gw.baseURL, `/v1/models/${id}`);
      assertError(r, { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    });
  }

  test('HEAD answers the head of GET', T, async () => {
    const res = await fetch(`${gw.baseURL}/v1/models/mock_model`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
  });

  test('POST -> 405 with Allow', T, async () => {
    const r = await postJson(gw.baseURL, '/v1/models/mock_model', {});
    assertError(r, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed' });
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
  });
});

describe('body limits per route', () => {
  test('a GET with a body larger than its route allows -> 413, chat still takes it', T, async () => {
    const big = 'x'.repeat(100 * 1024);
    const sock = await rawConnect(gw.port);
    await sock.write(`GET /v1/models HTTP/1.1\r\nHost: a\r\nContent-Length: ${big.length}\r\n\r\n`);
    const reply = await sock.read();
    sock.close();
    assert.equal(reply?.status, 413);
    assert.equal(reply.json?.error?.code, 'payload_too_large');
    const chat = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(big));
    assert.equal(chat.status, 200, chat.text);
  });
});
