// What a client can send that HTTP or JSON leaves room to read two ways: smuggling framings,
// lines that never end, HEAD, absolute-form targets, Expect: 100-continue, JSON nested past the
// limit, repeated keys and invalid text. Raw sockets, so the bytes on the wire are what is tested.

import { describe, test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, rawConnect, assertError, ensureServing, chatBody,
  sleep, waitFor, assertStillServing, parseHttpResponse,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;
let config;

before(async () => {
  mock = await startMock();
  config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, {
    gateway: { body_timeout_ms: 10000 },
  });
  gw = await startGateway({ config });
});
beforeEach(async () => {
  if (gw) gw = await ensureServing(gw, { config });
});
// Every attack must leave the gateway serving (a crash fails the test that caused it).
afterEach(async () => {
  if (gw) await assertStillServing(gw);
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const SMUGGLED = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
const JSON_HEADERS = 'Host: x\r\nContent-Type: application/json\r\n';

/** Sends `bytes`, returns every response the gateway writes before closing (within 3 s). */
async function exchange(bytes, { waitMs = 3000 } = {}) {
  const c = await rawConnect(gw.port);
  await c.write(bytes);
  const responses = [];
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    const r = await c.read(Math.max(1, deadline - Date.now()));
    if (!r) break;
    responses.push(r);
  }
  const closed = await c.waitClosed(500);
  c.close();
  return { responses, closed };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Sends `bytes` on a fresh connection that asks to be closed; returns the raw answer and its parse. */
async function rawExchange(bytes) {
  const c = await rawConnect(gw.port);
  await c.write(bytes);
  await c.waitClosed(3000);
  const raw = Buffer.from(c.buffered);
  c.close();
  const r = raw.length ? parseHttpResponse(raw, { complete: true }) : null;
  return { raw, r };
}

/** Asserts `buf` (a whole answer) decodes as UTF-8 without a replacement. */
function assertUtf8(buf) {
  assert.doesNotThrow(() => strictUtf8.decode(buf), `the answer is not valid UTF-8: ${buf.toString('latin1').slice(0, 300)}`);
}

describe('request smuggling: ambiguous framing is refused and the connection closed', () => {
  const framings = {
    'Transfer-Encoding: xchunked': 'Transfer-Encoding: xchunked\r\n',
    'Transfer-Encoding: gzip': 'Transfer-Encoding: gzip\r\n',
    'Transfer-Encoding: chunked, gzip': 'Transfer-Encoding: chunked, gzip\r\n',
    'Transfer-Encoding: gzip, chunked': 'Transfer-Encoding: gzip, chunked\r\n',
    'Transfer-Encoding: identity': 'Transfer-Encoding: identity\r\n',
    'Transfer-Encoding: chunked twice': 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n',
    'Transfer-Encoding with Content-Length': 'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n',
  };
  for (const [name, fields] of Object.entries(framings)) {
    test(`${name} -> one 400, the smuggled request is never answered`, T, async () => {
      const { responses, closed } = await exchange(`POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}${fields}\r\n0\r\n\r\n${SMUGGLED}`);
      assert.equal(responses.length, 1, `responses: ${responses.map((r) => r.status)}`);
      assertError(responses[0], { status: 400, code: 'invalid_value' });
      assert.ok(closed, 'connection left open');
    });
  }
  for (const [name, head] of [
    ['HTTP/1.0 with Transfer-Encoding', `POST ${CHAT} HTTP/1.0\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n'],
    ['two Host headers', 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
    ['two Authorization headers', 'GET /v1/models HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer sk-a\r\nAuthorization: Bearer sk-b\r\n\r\n'],
  ]) {
    test(`${name} -> 400 and close`, T, async () => {
      const { responses, closed } = await exchange(head + SMUGGLED);
      assert.equal(responses.length, 1);
      assertError(responses[0], { status: 400, code: 'invalid_value' });
      assert.ok(closed);
    });
  }
  test('a well-formed chunked POST still works', T, async () => {
    const body = JSON.stringify(chatBody('chunked hello'));
    const { responses } = await exchange(`POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
      `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n`);
    assert.equal(responses[0]?.status, 200, responses[0]?.text);
  });
});

function rssKiB(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return Number(m[1]);
}

describe('chunk metadata is bounded', () => {
  for (const [name, prefix] of [
    ['a chunk-size line', ''],
    ['a chunk extension', '1;ext='],
    ['a trailer line', '0\r\nX-Trailer: '],
  ]) {
    test(`${name} that never ends -> 400 and close, memory flat`, T, async () => {
      const before = rssKiB(gw.pid);
      const socket = net.connect(gw.port, '127.0.0.1');
      let received = '';
      let closed = false;
      socket.on('data', (d) => { received += d.toString('latin1'); });
      socket.on('error', () => {});
      socket.on('close', () => { closed = true; });
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}Transfer-Encoding: chunked\r\n\r\n${prefix}`);
      const filler = Buffer.alloc(64 * 1024, prefix === '' ? '1' : 'a');
      const t0 = Date.now();
      let sent = 0;
      while (!closed && sent < 50 * 1024 * 1024 && Date.now() - t0 < 3000) {
        if (!socket.write(filler)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
        sent += filler.length;
      }
      // Refused and closed well before body_timeout_ms (10 s).
      await waitFor(() => closed, 3000).catch(() => {});
      const took = Date.now() - t0;
      await sleep(100);
      const grown = rssKiB(gw.pid) - before;
      socket.destroy();
      assert.match(received, /^HTTP\/1\.1 400 /, `got ${JSON.stringify(received.slice(0, 200))} after ${sent} bytes`);
      assert.ok(closed, 'connection still open');
      assert.ok(took < 5000, `refused after ${took} ms, not well before the body timeout`);
      assert.ok(grown < 32 * 1024, `RSS grew by ${grown} KiB after ${sent} bytes`);
    });
  }
});

/**
 * Waits until the bytes received on `c` past `offset` contain `needle`, then a moment more so that
 * bytes that should not come (a body after a HEAD answer) would have arrived. Returns them as text.
 */
async function received(c, needle, offset = 0) {
  await waitFor(() => c.buffered.subarray(offset).includes(needle), 3000).catch(() => {});
  await sleep(150);
  return c.buffered.subarray(offset).toString('latin1');
}

describe('HEAD, absolute-form targets and Expect: 100-continue', () => {
  test('HEAD /health -> GET\'s head without a body; a GET on the same connection then answers', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const head = await received(c, '\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 200 /, head);
      assert.match(head, /\r\nContent-Length: 15\r\n/i, head);
      assert.ok(head.endsWith('\r\n\r\n'), `bytes after the head: ${JSON.stringify(head)}`);
      assert.equal(head.split('HTTP/1.1').length, 2, head);
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const next = await received(c, '{"status":"ok"}', head.length);
      assert.match(next, /^HTTP\/1\.1 200 [^]*\r\n\r\n\{"status":"ok"\}$/, JSON.stringify(next));
      assert.equal(c.closed, false);
    } finally {
      c.close();
    }
  });

  test('HEAD pipelined before a GET: one head, then the GET\'s full answer', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const both = await received(c, '{"status":"ok"}');
      const parts = both.split(/(?=HTTP\/1\.1 )/);
      assert.equal(parts.length, 2, JSON.stringify(both));
      assert.match(parts[0], /^HTTP\/1\.1 200 [^]*\r\n\r\n$/, JSON.stringify(parts[0]));
      assert.match(parts[1], /^HTTP\/1\.1 200 [^]*\r\n\r\n\{"status":"ok"\}$/, JSON.stringify(parts[1]));
    } finally {
      c.close();
    }
  });

  test('HEAD on the chat endpoint -> 405 with Allow: POST and no body; HEAD /nope -> 404 with no body; the connection stays usable', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write(`HEAD ${CHAT} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const h405 = await received(c, '\r\n\r\n');
      assert.match(h405, /^HTTP\/1\.1 405 /, h405);
      assert.match(h405, /\r\nAllow: POST\r\n/i, h405);
      assert.ok(h405.endsWith('\r\n\r\n') && h405.split('HTTP/1.1').length === 2, `bytes after the head: ${JSON.stringify(h405)}`);
      assert.equal(c.closed, false, 'connection closed after the 405');
      await c.write('HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n');
      const h404 = await received(c, '\r\n\r\n', h405.length);
      assert.match(h404, /^HTTP\/1\.1 404 /, h404);
      assert.ok(h404.endsWith('\r\n\r\n') && h404.split('HTTP/1.1').length === 2, `bytes after the head: ${JSON.stringify(h404)}`);
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const ok = await received(c, '{"status":"ok"}', h405.length + h404.length);
      assert.match(ok, /^HTTP\/1\.1 200 [^]*\{"status":"ok"\}$/, JSON.stringify(ok));
    } finally {
      c.close();
    }
  });

  test('an absolute-form target is served by its path', T, async () => {
    const { responses } = await exchange(`GET http://127.0.0.1:${gw.port}/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(responses[0]?.status, 200);
    assert.deepEqual(responses[0].json, { status: 'ok' });
  });

  for (const [name, head, status] of [
    ['an unknown path', 'POST /v1/nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n', 404],
    ['the wrong content type', `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n`, 415],
    ['a body over the limit', `POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}Content-Length: 99999999\r\n`, 413],
  ]) {
    test(`Expect: 100-continue with ${name} -> ${status} without a 100 first`, T, async () => {
      const c = await rawConnect(gw.port);
      try {
        await c.write(`${head}Expect: 100-continue\r\n\r\n`);
        const text = await received(c, `HTTP/1.1 ${status} `);
        assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), text);
        assert.ok(!/HTTP\/1\.1 100 /.test(text), text);
      } finally {
        c.close();
      }
    });
  }

  test('Expect: 100-continue from an HTTP/1.0 client that sends its body gets no 100, only the 200', T, async () => {
    const body = JSON.stringify(chatBody('hi'));
    const { raw, r } = await rawExchange(`POST ${CHAT} HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const text = raw.toString('latin1');
    assert.ok(!/HTTP\/1\.[01] 100 /.test(text), text.slice(0, 300));
    assert.equal(r?.status, 200, text.slice(0, 300));
    assert.equal(text.split(/HTTP\/1\.[01] \d{3} /).length, 2, text.slice(0, 300));
  });

  test('Expect: 100-continue on a valid request: 100, then the body, then 200', T, async () => {
    const body = JSON.stringify(chatBody('hi'));
    const c = await rawConnect(gw.port);
    try {
      await c.write(`POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}Expect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
      const cont = await received(c, '\r\n\r\n');
      assert.equal(cont, 'HTTP/1.1 100 Continue\r\n\r\n');
      await c.write(body);
      const rest = await received(c, '"chat.completion"', cont.length);
      assert.match(rest, /^HTTP\/1\.1 200 /, rest);
      const r = parseHttpResponse(c.buffered.subarray(cont.length));
      assert.equal(r?.json?.object, 'chat.completion', rest);
    } finally {
      c.close();
    }
  });
});

describe('JSON bodies: depth, repeated keys and text', () => {
  async function postRaw(bytes) {
    const res = await fetch(gw.baseURL + CHAT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes });
    const buf = Buffer.from(await res.arrayBuffer());
    const text = buf.toString('utf8');
    assert.ok(Buffer.from(text, 'utf8').equals(buf), 'the answer is not valid UTF-8');
    let json;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: res.status, headers: res.headers, text, json };
  }

  test('150,000 nested [ -> 400 invalid_json, and the gateway keeps serving', T, async () => {
    assertError(await postRaw('['.repeat(150_000)), { status: 400, code: 'invalid_json' });
    assert.equal((await fetch(`${gw.baseURL}/health`)).status, 200);
  });
  test('content nested 100,000 deep -> 400 invalid_json', T, async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const e = assertError(await postRaw(`{"model":"mock_model","messages":[{"role":"user","content":${deep}}]}`), { status: 400, code: 'invalid_json' });
    assert.match(e.message, /deeper than 128/);
  });
  test('content nested 100 deep is accepted', T, async () => {
    const deep = '['.repeat(100) + ']'.repeat(100);
    const r = await postRaw(`{"model":"mock_model","messages":[{"role":"user","content":"x"},{"role":"user","content":${deep}}]}`);
    assert.equal(r.status, 200, r.text);
  });
  test('a repeated top-level key -> 400 invalid_json naming it', T, async () => {
    assertError(await postRaw('{"model":"mock_model","messages":[{"role":"user","content":"x"}],"stream":true,"stream":false}'),
      { status: 400, code: 'invalid_json', param: 'stream' });
  });
  test('a repeated nested key -> 400 invalid_json with its path', T, async () => {
    assertError(await postRaw('{"model":"mock_model","messages":[{"role":"user","role":"system","content":"x"}]}'),
      { status: 400, code: 'invalid_json', param: 'messages[0].role' });
  });
  for (const [name, bytes] of [['0xC3 0x28', Buffer.from([0xc3, 0x28])], ['0xFF', Buffer.from([0xff])]]) {
    test(`invalid UTF-8 (${name}) in a string -> 400 invalid_json`, T, async () => {
      const body = Buffer.concat([Buffer.from('{"model":"mock_model","messages":[{"role":"user","content":"a'), bytes, Buffer.from('"}]}')]);
      assertError(await postRaw(body), { status: 400, code: 'invalid_json', param: 'messages[0].content' });
    });
  }
  test('a lone low surrogate escape -> 400 invalid_json', T, async () => {
    assertError(await postRaw('{"model":"mock_model","messages":[{"role":"user","content":"\\udc00"}]}'), { status: 400, code: 'invalid_json' });
  });
  test('control and non-UTF-8 bytes in a path: the error body is valid UTF-8 JSON', T, async () => {
    const { raw, r } = await rawExchange(Buffer.concat([Buffer.from('GET /v1/'), Buffer.from([0xff, 0x01]), Buffer.from('x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]));
    assert.ok(r, 'no answer');
    assertUtf8(raw);
    assert.ok(r.status === 404 || r.status === 400, `status ${r.status}`);
    const e = assertError({ ...r, json: JSON.parse(r.text) }, {});
    assert.ok(!e.message.includes('\u0001'), e.message);
  });
  test('unknown field names with escaped control bytes are listed in valid JSON', T, async () => {
    const r = await postRaw('{"model":"mock_model","messages":[{"role":"user","content":"x"}],"a\\u0001b":1,"tollgate::deny_unknown_fields":true}');
    const e = assertError(r, { status: 400, code: 'unknown_parameter' });
    assert.ok(e.message.includes('a\u0001b'));
  });
  for (const [name, bytes] of [['0xFF', [0xff]], ['0xC3 0x28', [0xc3, 0x28]], ['a raw 0x01', [0x01]], ['a raw 0x7F and 0x1B', [0x7f, 0x1b]]]) {
    test(`a field name with ${name} and deny_unknown_fields -> 400 in valid UTF-8 JSON`, T, async () => {
      const body = Buffer.concat([
        Buffer.from('{"model":"mock_model","messages":[{"role":"user","content":"x"}],"tollgate::deny_unknown_fields":true,"k'),
        Buffer.from(bytes), Buffer.from('":1}'),
      ]);
      const r = await postRaw(body);
      assertError(r, { status: 400 });
      assert.match(r.json.error.code, /^(invalid_json|unknown_parameter)$/);
    });
  }
});
