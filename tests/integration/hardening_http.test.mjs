// What a client can send that HTTP or JSON leaves room to read two ways: smuggling framings,
// lines that never end, HEAD, absolute-form targets, Expect: 100-continue, JSON nested past the
// limit, repeated keys and invalid text. Raw sockets, so the bytes on the wire are what is tested.

import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, rawConnect, assertError, ensureServing, chatBody,
  sleep,
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
      await sleep(200);
      const grown = rssKiB(gw.pid) - before;
      socket.destroy();
      assert.match(received, /^HTTP\/1\.1 400 /, `got ${received.slice(0, 200)}`);
      assert.ok(Date.now() - t0 < 5000, 'not refused before the body timeout');
      assert.ok(grown < 32 * 1024, `RSS grew by ${grown} KiB after ${sent} bytes`);
    });
  }
});

describe('HEAD, absolute-form targets and Expect: 100-continue', () => {
  test('HEAD /health -> GET\'s head without a body; the connection stays usable', T, async () => {
    const c = await rawConnect(gw.port);
    await c.write('HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(200);
    const head = c.buffered.toString('latin1');
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /Content-Length: 15\r\n/i);
    assert.ok(head.endsWith('\r\n\r\n'), `bytes after the head: ${JSON.stringify(head)}`);
    c.socket.read();
    const fresh = await rawConnect(gw.port);
    await fresh.write('HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(200);
    const both = fresh.buffered.toString('latin1');
    const parts = both.split('HTTP/1.1 200 OK');
    assert.equal(parts.length, 3, both);
    assert.ok(both.endsWith('{"status":"ok"}'), both);
    c.close();
    fresh.close();
  });

  test('HEAD on a POST endpoint -> 405 with Allow and no body; HEAD on nothing -> 404 with no body', T, async () => {
    const c = await rawConnect(gw.port);
    await c.write(`HEAD ${CHAT} HTTP/1.1\r\nHost: x\r\n\r\nHEAD /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n`);
    await sleep(200);
    const text = c.buffered.toString('latin1');
    c.close();
    const heads = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(heads.length, 3, text);
    assert.match(heads[0], /^HTTP\/1\.1 405 [^]*\r\nAllow: POST\r\n\r\n$/);
    assert.match(heads[1], /^HTTP\/1\.1 404 [^]*\r\n\r\n$/);
    assert.match(heads[2], /^HTTP\/1\.1 200 [^]*\{"status":"ok"\}$/);
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
      await c.write(`${head}Expect: 100-continue\r\n\r\n`);
      await sleep(300);
      const text = c.buffered.toString('latin1');
      c.close();
      assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), text);
      assert.ok(!text.includes('100 Continue'), text);
    });
  }

  test('Expect: 100-continue from an HTTP/1.0 client gets no 100', T, async () => {
    const body = JSON.stringify(chatBody('hi'));
    const { responses } = await exchange(`POST ${CHAT} HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    assert.equal(responses[0]?.status, 200);
    assert.equal(responses.length, 1);
  });

  test('Expect: 100-continue on a valid request: 100, then the body, then 200', T, async () => {
    const body = JSON.stringify(chatBody('hi'));
    const c = await rawConnect(gw.port);
    await c.write(`POST ${CHAT} HTTP/1.1\r\n${JSON_HEADERS}Expect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    await sleep(300);
    assert.equal(c.buffered.toString('latin1'), 'HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.read();
    const cont = c.buffered.length;
    await c.write(body);
    await sleep(500);
    const rest = c.buffered.subarray(cont).toString('latin1');
    c.close();
    assert.match(rest, /^HTTP\/1\.1 200 /, rest);
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
  test('control and non-UTF-8 bytes in a path come back escaped, in valid JSON', T, async () => {
    const { responses } = await exchange(Buffer.concat([Buffer.from('GET /v1/'), Buffer.from([0xff, 0x01]), Buffer.from('x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]));
    const r = responses[0];
    assert.ok(r, 'no answer');
    if (r.status === 404) {
      assert.ok(r.json, r.text);
      assert.match(r.json.error.message, /\\xff/);
    } else {
      assertError(r, { status: 400 });
    }
  });
  test('unknown field names with control bytes are listed escaped, in valid JSON', T, async () => {
    const r = await postRaw('{"model":"mock_model","messages":[{"role":"user","content":"x"}],"a\\u0001b":1,"tollgate::deny_unknown_fields":true}');
    const e = assertError(r, { status: 400, code: 'unknown_parameter' });
    assert.ok(e.message.includes('a\u0001b'));
  });
});
