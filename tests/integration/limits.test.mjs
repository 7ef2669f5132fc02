// Request size and time limits, driven over raw sockets:
// 431 (headers too large), 413 (body too large), 408 (slow header / body).

import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, rawConnect, assertError, sleep, getJson, assertStillServing, ensureServing,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
const HEADER_TIMEOUT_MS = 300;
const BODY_TIMEOUT_MS = 500;
const MAX_HEADER_BYTES = 16384;
const MAX_BODY_BYTES = 1048576;
let mock;
let gw;

let config;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  config = standardConfig(mock.url, dead, {
    gateway: {
      header_timeout_ms: HEADER_TIMEOUT_MS,
      body_timeout_ms: BODY_TIMEOUT_MS,
      max_header_bytes: MAX_HEADER_BYTES,
      max_body_bytes: MAX_BODY_BYTES,
    },
  });
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

/** Adds the fields assertError expects from a raw parsed response. */
const asResult = (r) => r && { status: r.status, headers: r.headers, text: r.text, json: r.json };

/** Opens a socket, sends `parts` (strings/buffers, with optional {pause} entries), reads one response. */
async function exchange(parts, readTimeoutMs = 5000) {
  const c = await rawConnect(gw.port);
  try {
    for (const p of parts) {
      if (typeof p === 'object' && p !== null && 'pause' in p) await sleep(p.pause);
      else await c.write(p);
    }
    const t0 = Date.now();
    const r = await c.read(readTimeoutMs);
    return { r, conn: c, waited: Date.now() - t0 };
  } catch (err) {
    c.close();
    throw err;
  }
}

function echoRequest(extraJson = {}, content = 'limits ok') {
  const payload = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content }], ...extraJson });
  const head = `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;
  return { head, payload };
}

describe('header size limit (max_header_bytes = 16384)', () => {
  test('one huge header (20 KB) -> 431 headers_too_large', T, async () => {
    const { r, conn } = await exchange([`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    conn.close();
    assert.ok(r, 'no response (connection closed without an answer?)');
    assertError(asResult(r), { status: 431, type: 'invalid_request_error', code: 'headers_too_large' });
    await assertStillServing(gw);
  });

  test('many headers totalling ~24 KB -> 431 headers_too_large', T, async () => {
    let h = '';
    for (let i = 0; i < 120; i++) h += `X-Filler-${i}: ${'b'.repeat(190)}\r\n`;
    const { r, conn } = await exchange([`GET /health HTTP/1.1\r\nHost: x\r\n${h}\r\n`]);
    conn.close();
    assert.ok(r, 'no response');
    assertError(asResult(r), { status: 431, code: 'headers_too_large' });
    await assertStillServing(gw);
  });

  test('headers of ~8 KB are fine -> 200', T, async () => {
    const { r, conn } = await exchange([`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(8_000)}\r\n\r\n`]);
    conn.close();
    assert.equal(r?.status, 200);
  });
});

describe('body size limit (max_body_bytes = 1 MiB)', () => {
  test('Content-Length over the limit -> 413 payload_too_large without waiting for the body', T, async () => {
    const t0 = Date.now();
    const { r, conn } = await exchange([
      `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n{"model":`,
    ]);
    conn.close();
    assert.ok(r, 'no response');
    assertError(asResult(r), { status: 413, type: 'invalid_request_error', code: 'payload_too_large' });
    assert.ok(Date.now() - t0 < BODY_TIMEOUT_MS + 1000, 'answer took as long as a body timeout');
    await assertStillServing(gw);
  });

  test('a 1.2 MB body actually sent -> 413 payload_too_large', T, async () => {
    const { head, payload } = echoRequest({ padding: 'p'.repeat(1_200_000) });
    const { r, conn } = await exchange([head + payload]);
    conn.close();
    assert.ok(r, 'no response');
    assertError(asResult(r), { status: 413, code: 'payload_too_large' });
    await assertStillServing(gw);
  });

  test('a body just under the limit -> 200', T, async () => {
    const base = echoRequest({ padding: '' }).payload.length;
    const { head, payload } = echoRequest({ padding: 'p'.repeat(MAX_BODY_BYTES - base - 16) });
    assert.ok(Buffer.byteLength(payload) <= MAX_BODY_BYTES);
    const { r, conn } = await exchange([head + payload]);
    conn.close();
    assert.equal(r?.status, 200, r?.text?.slice(0, 300));
    assert.equal(r.json.choices[0].message.content, 'limits ok');
  });
});

describe('idle keep-alive connections (idle_timeout_ms = 400)', () => {
  const IDLE_MS = 400;
  let idleGw;
  before(async () => {
    idleGw = await startGateway({
      config: standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, {
        gateway: { idle_timeout_ms: IDLE_MS },
      }),
    });
  });
  after(async () => {
    await idleGw?.stop();
  });

  test('a connection left idle is closed after the idle timeout, not before', T, async () => {
    const c = await rawConnect(idleGw.port);
    try {
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await c.read(3000))?.status, 200);
      const answered = Date.now();
      assert.equal(await c.waitClosed(3000), true, 'an idle connection was left open');
      const after = Date.now() - answered;
      assert.ok(after >= IDLE_MS - 100, `closed ${after} ms after its answer`);
      assert.equal(c.buffered.length, 0, 'bytes sent before closing an idle connection');
    } finally {
      c.close();
    }
  });

  test('a connection used more often than the idle timeout stays open', T, async () => {
    const c = await rawConnect(idleGw.port);
    try {
      const started = Date.now();
      // Eight requests 150 ms apart: the connection lives three idle timeouts, never idle for one.
      for (let i = 0; i < 8; i += 1) {
        await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.equal((await c.read(3000))?.status, 200, `request ${i} after ${Date.now() - started} ms`);
        await sleep(150);
      }
      assert.equal(c.closed, false);
      assert.equal(await c.waitClosed(3000), true, 'left open once idle');
    } finally {
      c.close();
    }
  });
});

describe('slow clients (header_timeout_ms = 300, body_timeout_ms = 500)', () => {
  test('header started but not finished -> 408 request_timeout, then close', T, async () => {
    const { r, conn, waited } = await exchange(['GET /health HTTP/1.1\r\nHost: x\r\n'], 4000);
    try {
      assert.ok(r, `no 408 within 4 s (closed: ${conn.closed})`);
      assertError(asResult(r), { status: 408, type: 'invalid_request_error', code: 'request_timeout' });
      assert.ok(waited >= HEADER_TIMEOUT_MS - 100, `408 after ${waited} ms, before the header timeout`);
      assert.equal(await conn.waitClosed(2000), true, 'connection left open after 408');
    } finally {
      conn.close();
    }
    await assertStillServing(gw);
  });

  test('header completed in parts within the timeout -> 200', T, async () => {
    const { r, conn } = await exchange(['GET /health HTTP/1.1\r\n', { pause: 100 }, 'Host: x\r\n', { pause: 100 }, '\r\n']);
    conn.close();
    assert.equal(r?.status, 200);
  });

  test('body not finished in time -> 408 request_timeout', T, async () => {
    const { head, payload } = echoRequest();
    const { r, conn, waited } = await exchange([head + payload.slice(0, 10)], 4000);
    try {
      assert.ok(r, `no 408 within 4 s (closed: ${conn.closed})`);
      assertError(asResult(r), { status: 408, type: 'invalid_request_error', code: 'request_timeout' });
      assert.ok(waited >= BODY_TIMEOUT_MS - 150, `408 after ${waited} ms, before the body timeout`);
      assert.equal(await conn.waitClosed(2000), true, 'connection left open after 408');
    } finally {
      conn.close();
    }
    await assertStillServing(gw);
  });

  test('body sent in parts within the timeout -> 200', T, async () => {
    const { head, payload } = echoRequest();
    const { r, conn } = await exchange([head, { pause: 100 }, payload.slice(0, 20), { pause: 100 }, payload.slice(20)]);
    conn.close();
    assert.equal(r?.status, 200, r?.text);
    assert.equal(r.json.choices[0].message.content, 'limits ok');
  });

  test('an idle kept-alive connection is not sent a 408 between requests', T, async () => {
    const c = await rawConnect(gw.port);
    try {
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await c.read(3000))?.status, 200);
      await sleep(HEADER_TIMEOUT_MS + 300);
      // Between requests only the idle timeout (60 s here) applies: no 408, no close.
      assert.equal(c.buffered.length, 0, `unsolicited bytes: ${c.buffered.toString().slice(0, 200)}`);
      assert.equal(c.closed, false, 'an idle keep-alive connection was closed by the header timeout');
      await c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const r = await c.read(3000);
      assert.equal(r?.status, 200, `got ${r?.status}`);
    } finally {
      c.close();
    }
  });

  test('the server is healthy after the limit tests', T, async () => {
    assert.equal((await getJson(gw.baseURL, '/health')).status, 200);
    await assertStillServing(gw);
  });
});
