// Pooled upstream connections: a connection is reused only when its answer ended exactly and
// nothing arrived on it since, so one client never gets another's answer; a request is never
// sent twice; interim answers are skipped; a late last chunk never stalls the client; a stream
// answered without text/event-stream fails over before the client's 200.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, chatBody, marker, assertError,
  rawConnect, sleep, waitFor, assertStillServing,
} from '../fixtures/gateway.mjs';
import {
  startRawUpstream, completionResponse, sseChunk, chunk, lastUserText,
} from '../fixtures/raw_upstream.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';

/** A gateway (one worker, so one pool) whose model `raw` routes to `providers` in order. */
async function gatewayFor(providers) {
  return startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS, workers: 1 },
      models: { raw: { routing: Object.keys(providers), providers } },
    },
  });
}

async function withRaw(handler, fn, overrides = {}) {
  const up = await startRawUpstream(handler);
  const gw = await gatewayFor({ p: openaiProvider(up.url, overrides) });
  try {
    await fn(gw, up);
    await assertStillServing(gw);
  } finally {
    await gw.stop();
    await up.close();
  }
}

async function ask(gw, text) {
  const r = await postJson(gw.baseURL, CHAT, chatBody(text, {}, 'raw'));
  return { ...r, content: r.json?.choices?.[0]?.message?.content };
}

describe('interim (1xx) answers are skipped, not taken as the answer', () => {
  for (const interim of ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n']) {
    test(`upstream ${interim.slice(9, 24).trim()} before the answer`, T, async () => {
      await withRaw(({ socket, request }) => {
        socket.write(interim + completionResponse(`real ${lastUserText(request)}`));
      }, async (gw) => {
        for (const m of [marker('a'), marker('b')]) {
          const r = await ask(gw, m);
          assert.equal(r.status, 200, r.text);
          assert.equal(r.content, `real ${m}`);
        }
      });
    });
  }
});

describe('a second client never sees the first client\'s answer', () => {
  const leaked = completionResponse('LEAKED');
  const cases = [
    ['bytes past Content-Length, in the same write', ({ socket, request, index }) => {
      socket.write(completionResponse(lastUserText(request)) + (index === 0 ? leaked : ''));
    }],
    ['a forged answer 50 ms after the real one', ({ socket, request, index }) => {
      socket.write(completionResponse(lastUserText(request)));
      if (index === 0) setTimeout(() => socket.write(leaked), 50);
    }],
    ['bytes past a chunked answer\'s last chunk', ({ socket, request, index }) => {
      const body = JSON.parse(completionResponse(lastUserText(request)).split('\r\n\r\n')[1]);
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        chunk(JSON.stringify(body)) + '0\r\n\r\n' + (index === 0 ? leaked : ''));
    }],
  ];
  for (const [name, handler] of cases) {
    test(name, T, async () => {
      await withRaw(handler, async (gw) => {
        const first = marker('first');
        assert.equal((await ask(gw, first)).content, first);
        await sleep(150);
        for (let i = 0; i < 3; i++) {
          const m = marker('next');
          const r = await ask(gw, m);
          assert.equal(r.status, 200, r.text);
          assert.ok(!r.text.includes('LEAKED'), `got the forged answer: ${r.text}`);
          assert.equal(r.content, m, 'got another request\'s answer');
        }
      });
    });
  }
});

describe('a POST is never sent upstream twice', () => {
  test('upstream reads the request on a pooled connection and closes without answering -> 502, sent once', T, async () => {
    await withRaw(({ socket, request, index }) => {
      if (index === 1) {
        socket.destroy();
        return;
      }
      socket.write(completionResponse(lastUserText(request)));
    }, async (gw, up) => {
      assert.equal((await ask(gw, 'one')).status, 200);
      const r = await ask(gw, 'two');
      assert.equal(r.status, 502, r.text);
      assert.match(r.json.error.code, /^upstream_(error|unavailable)$/);
      await sleep(100);
      assert.equal(up.requests.length, 2, 'the request was sent upstream again');
    });
  });

  test('upstream closes the connection right after its answer: the next request goes on a fresh one, once', T, async () => {
    await withRaw(({ socket, request }) => {
      socket.end(completionResponse(lastUserText(request)));
    }, async (gw, up) => {
      assert.equal((await ask(gw, 'one')).content, 'one');
      await sleep(200);
      assert.equal((await ask(gw, 'two')).content, 'two');
      assert.equal(up.requests.length, 2);
      assert.equal(up.connections, 2);
    });
  });
});

describe('idle pooled connections', () => {
  test('pool_idle_timeout_ms = 300: a connection idle for 700 ms is not reused', T, async () => {
    await withRaw(({ socket, request }) => {
      socket.write(completionResponse(lastUserText(request)));
    }, async (gw, up) => {
      assert.equal((await ask(gw, 'one')).content, 'one');
      assert.equal((await ask(gw, 'two')).content, 'two');
      assert.equal(up.connections, 1, 'back-to-back requests share a connection');
      await sleep(700);
      assert.equal((await ask(gw, 'three')).content, 'three');
      assert.equal(up.connections, 2);
    }, { pool_idle_timeout_ms: 300 });
  });

  test('an upstream that closes idle connections after 200 ms: every request succeeds, each sent once', T, async () => {
    let seen = 0;
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        seen++;
        const text = completionResponse(JSON.parse(body).messages[0].content).split('\r\n\r\n')[1];
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
    });
    server.keepAliveTimeout = 200;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gw = await gatewayFor({ p: openaiProvider(`http://127.0.0.1:${server.address().port}/v1`) });
    try {
      for (let i = 0; i < 3; i++) {
        const m = marker('idle');
        assert.equal((await ask(gw, m)).content, m);
        await sleep(500);
      }
      assert.equal(seen, 3);
    } finally {
      await gw.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('no keep-alive stall after [DONE]', () => {
  test('a last chunk 3 s late neither delays the end of the client\'s stream nor its next request', T, async () => {
    await withRaw(({ socket, request }) => {
      if (request.json?.stream) {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
          chunk(sseChunk('hello')) + chunk('data: [DONE]\n\n'));
        setTimeout(() => { if (!socket.destroyed) socket.write('0\r\n\r\n'); }, 3000);
      } else {
        socket.write(completionResponse(lastUserText(request)));
      }
    }, async (gw) => {
      const c = await rawConnect(gw.port);
      try {
        const send = (body) => {
          const text = JSON.stringify(body);
          return c.write(`POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        };
        await send(chatBody('s', { stream: true }, 'raw'));
        await waitFor(() => c.buffered.includes('data: [DONE]'), 5000);
        const tDone = Date.now();
        const streamed = await c.read(5000);
        const took = Date.now() - tDone;
        assert.ok(streamed, 'no complete streamed response');
        assert.match(streamed.text, /data: \[DONE\]/);
        assert.ok(took < 500, `the chunked response ended ${took} ms after [DONE]`);
        const t1 = Date.now();
        await send(chatBody('next', {}, 'raw'));
        const next = await c.read(5000);
        assert.equal(next?.status, 200);
        assert.ok(Date.now() - t1 < 500, `next request took ${Date.now() - t1} ms`);
      } finally {
        c.close();
      }
    });
  });
});

describe('a streamed request answered without text/event-stream', () => {
  for (const [type, body] of [['text/html', '<html><body>maintenance</body></html>'], ['application/json', '{"id":"x","choices":[]}']]) {
    test(`first provider answers 200 ${type}: the client gets the second provider's stream`, T, async () => {
      const bad = await startRawUpstream(({ socket }) => {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      });
      const mock = await startMock();
      const gw = await gatewayFor({ bad: openaiProvider(bad.url), good: openaiProvider(mock.url) });
      try {
        const res = await fetch(gw.baseURL + CHAT, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify(chatBody('hi', { stream: true }, 'raw')),
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        assert.match(res.headers.get('content-type'), /text\/event-stream/);
        assert.match(text, /data: \[DONE\]/);
        assert.ok(!text.includes('"error"'), text);
      } finally {
        await gw.stop();
        await bad.close();
        await mock.close();
      }
    });
  }

  test('with no other provider: a JSON 502 upstream_error, not a 200', T, async () => {
    await withRaw(({ socket }) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\noops');
    }, async (gw) => {
      const r = await postJson(gw.baseURL, CHAT, chatBody('hi', { stream: true }, 'raw'));
      assertError(r, { status: 502, type: 'api_error', code: 'upstream_error' });
    });
  });
});
