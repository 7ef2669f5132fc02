// HTTP surface: health/ready, unknown paths and methods, content types,
// keep-alive, and the access log on stderr.

import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, postJson, getJson, chatBody, marker, assertError,
  assertCompletion, rawConnect, waitFor, assertStillServing, ensureServing, UPSTREAM_KEY,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

let config;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  config = standardConfig(mock.url, dead);
  gw = await startGateway({ config });
});
// A crash in one test (reported by that test) must not fail the next ones.
beforeEach(async () => {
  if (gw) gw = await ensureServing(gw, { config });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

describe('health and readiness', () => {
  test('GET /health -> 200', T, async () => {
    const r = await getJson(gw.baseURL, '/health');
    assert.equal(r.status, 200, r.text);
  });
  test('GET /ready -> 200 while serving', T, async () => {
    const r = await getJson(gw.baseURL, '/ready');
    assert.equal(r.status, 200, r.text);
  });
});

describe('unknown paths and methods', () => {
  for (const p of ['/', '/v1', '/v1/nope', '/v2/chat/completions', '/v1/chat/completions/extra', '/healthz']) {
    test(`GET ${p} -> 404 not_found`, T, async () => {
      const r = await getJson(gw.baseURL, p);
      assertError(r, { status: 404, type: 'invalid_request_error', code: 'not_found' });
    });
  }
  test('POST to an unknown path -> 404 not_found', T, async () => {
    const r = await postJson(gw.baseURL, '/v1/completions', chatBody('hi'));
    assertError(r, { status: 404, type: 'invalid_request_error', code: 'not_found' });
  });

  for (const [method, p] of [
    ['GET', CHAT],
    ['PUT', CHAT],
    ['DELETE', CHAT],
    ['POST', '/v1/models'],
    ['DELETE', '/v1/models'],
    ['POST', '/health'],
    ['POST', '/ready'],
  ]) {
    test(`${method} ${p} -> 405 method_not_allowed`, T, async () => {
      const init = { method };
      if (method !== 'GET') {
        init.headers = { 'content-type': 'application/json' };
        init.body = '{}';
      }
      const res = await fetch(gw.baseURL + p, init);
      const text = await res.text();
      let json;
      try { json = JSON.parse(text); } catch { /* asserted below */ }
      assertError({ status: res.status, headers: res.headers, text, json }, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed' });
    });
  }
});

describe('Content-Type on POST /v1/chat/completions', () => {
  const body = JSON.stringify(chatBody('hi'));
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonl', 'multipart/form-data; boundary=x']) {
    test(`${ct} -> 415 unsupported_media_type`, T, async () => {
      const m = marker('ct');
      const r = await postJson(gw.baseURL, CHAT, JSON.stringify(chatBody(`hi ${m}`)), { headers: { 'content-type': ct } });
      assertError(r, { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type' });
      assert.equal(mock.requestsContaining(m).length, 0);
    });
  }
  test('no Content-Type -> 415 unsupported_media_type', T, async () => {
    const res = await fetch(gw.baseURL + CHAT, { method: 'POST', body: new TextEncoder().encode(body) });
    const text = await res.text();
    let json;
    try { json = JSON.parse(text); } catch { /* asserted below */ }
    assertError({ status: res.status, headers: res.headers, text, json }, { status: 415, code: 'unsupported_media_type' });
  });
  for (const ct of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
    test(`${ct} -> 200`, T, async () => {
      const r = await postJson(gw.baseURL, CHAT, body, { headers: { 'content-type': ct } });
      assertCompletion(r, { content: 'Hello from mock' });
    });
  }
});

describe('connection handling', () => {
  test('keep-alive: two requests on one socket', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\n\r\n`);
      const r1 = await c.read(5000);
      assert.ok(r1, 'no first response');
      assert.equal(r1.status, 200);
      const payload = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'second on same socket' }] });
      await c.write(`POST ${CHAT} HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
      const r2 = await c.read(5000);
      assert.ok(r2, `no second response on the kept-alive socket (closed: ${c.closed})`);
      assert.equal(r2.status, 200, r2.text);
      assert.equal(r2.json.choices[0].message.content, 'second on same socket');
      assert.equal(c.closed, false, 'server closed a keep-alive connection');
    } finally {
      c.close();
    }
  });

  test('keep-alive: an error response (404) does not close the connection', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write(`GET /nope HTTP/1.1\r\nHost: x\r\n\r\n`);
      const r1 = await c.read(5000);
      assert.equal(r1?.status, 404);
      await c.write(`GET /health HTTP/1.1\r\nHost: x\r\n\r\n`);
      const r2 = await c.read(5000);
      assert.equal(r2?.status, 200);
    } finally {
      c.close();
    }
  });

  test('pipelined requests are answered in order', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /ready HTTP/1.1\r\nHost: x\r\n\r\n');
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await c.read(5000))?.status);
      assert.deepEqual(statuses, [200, 404, 200]);
    } finally {
      c.close();
    }
  });

  test('Connection: close is honoured', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const r = await c.read(5000);
      assert.equal(r?.status, 200);
      assert.equal(await c.waitClosed(3000), true, 'server kept the connection open');
    } finally {
      c.close();
    }
  });

  test('HTTP/1.0 request without keep-alive gets an answer and a close', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('GET /health HTTP/1.0\r\n\r\n');
      const r = await c.read(5000);
      assert.equal(r?.status, 200);
      assert.equal(await c.waitClosed(3000), true);
    } finally {
      c.close();
    }
  });

  test('garbage request line -> 400 and the server stays up', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('THIS IS NOT HTTP\r\n\r\n');
      const r = await c.read(3000);
      assert.ok(r, 'no answer to a garbage request line');
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_value' });
      assert.equal(await c.waitClosed(3000), true, 'connection left open after a malformed request');
    } finally {
      c.close();
    }
    await assertStillServing(gw);
  });
});

describe('access log', () => {
  test('one JSON line on stderr per request', T, async () => {
    const m = marker('log');
    const before = gw.stderr.split('\n').length;
    await getJson(gw.baseURL, `/v1/nope-${encodeURIComponent(m)}`);
    const path = `/v1/nope-${encodeURIComponent(m)}`;
    await waitFor(() => gw.stderr.includes(path), 3000).catch(() => {});
    const lines = gw.stderr.split('\n').slice(before - 1).filter((l) => l.trim());
    const json = lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
    const mine = json.filter((o) => o.path === path);
    assert.equal(mine.length, 1, `expected one access-log line for ${path}; stderr tail:\n${lines.join('\n')}`);
    assert.equal(mine[0].status, 404);
    assert.equal(mine[0].method, 'GET');
  });

  test('a chat line has every field and no secret', T, async () => {
    const clientKey = 'sk-tollgate-client-secret-7d1e';
    const before = gw.stderr.length;
    const r = await postJson(gw.baseURL, '/v1/chat/completions?api_key=query-secret-93b1', chatBody('log me'),
      { headers: { Authorization: `Bearer ${clientKey}` } });
    assert.equal(r.status, 200);
    await waitFor(() => gw.stderr.slice(before).includes('"mock_model"'), 3000);
    const logged = gw.stderr.slice(before);
    const line = logged.split('\n').map((l) => { try { return JSON.parse(l); } catch { return null; } })
      .find((o) => o?.model === 'mock_model');
    assert.ok(line, `no access-log line for the chat request:\n${logged}`);
    assert.equal(line.method, 'POST');
    assert.equal(line.path, '/v1/chat/completions');
    assert.equal(line.status, 200);
    for (const k of ['upstream_ms', 'total_ms', 'bytes_in', 'bytes_out']) assert.equal(typeof line[k], 'number', k);
    assert.ok(line.upstream_ms > 0 && line.total_ms >= line.upstream_ms, JSON.stringify(line));
    assert.ok(line.bytes_in > 0 && line.bytes_out > 0, JSON.stringify(line));
    for (const secret of [clientKey, UPSTREAM_KEY, 'query-secret-93b1', 'log me']) {
      assert.ok(!gw.stderr.includes(secret), `stderr contains ${secret}`);
    }
  });
});
