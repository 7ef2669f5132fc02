// The core flows on a gateway with two workers: connections are handed from the one acceptor to
// each worker in turn, and each worker has its own upstream pool.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, DEFAULT_TEXT } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, postJson, chatBody, marker, readSSE, assertChunks,
  assertCompletion, waitFor, assertStillServing,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway({ config: standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { workers: 2 } }) });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

function stream(content) {
  return fetch(gw.baseURL + CHAT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody(content, { stream: true })) });
}

test('non-streamed and streamed completions', T, async () => {
  assertCompletion(await postJson(gw.baseURL, CHAT, chatBody('hi')), { content: DEFAULT_TEXT });
  const sse = await readSSE(await stream('hi'));
  assertChunks(sse);
  assert.ok(sse.done);
  assert.equal(sse.content, DEFAULT_TEXT);
});

test('20 concurrent mixed requests each get their own answer', T, async () => {
  const echo = (m) => postJson(gw.baseURL, CHAT, chatBody(m, {}, 'echo'));
  const work = [];
  const upstreamMarkers = [];
  for (let i = 0; i < 20; i++) {
    const m = marker(`w${i}`);
    if (i % 3 !== 1) upstreamMarkers.push(m);
    if (i % 3 === 0) {
      work.push(stream(m).then(readSSE).then((sse) => { assert.ok(sse.done); assert.equal(sse.content, DEFAULT_TEXT); }));
    } else if (i % 3 === 1) {
      work.push(echo(m).then((r) => { assert.equal(r.status, 200, r.text); assert.equal(r.json.choices[0].message.content, m); }));
    } else {
      work.push(postJson(gw.baseURL, CHAT, chatBody(m)).then((r) => assertCompletion(r, { content: DEFAULT_TEXT })));
    }
  }
  await Promise.all(work);
  const seen = mock.requests.map((r) => r.body?.messages?.at(-1)?.content);
  for (const m of upstreamMarkers) {
    assert.equal(seen.filter((c) => c === m).length, 1, `${m} reached the upstream ${seen.filter((c) => c === m).length} times`);
  }
});

test('a client abort cancels the upstream request', T, async () => {
  const before = mock.aborted;
  const ac = new AbortController();
  const pending = postJson(gw.baseURL, CHAT, chatBody('mock:slow=4000'), { signal: ac.signal });
  await waitFor(() => mock.requests.at(-1)?.body?.messages?.at(-1)?.content === 'mock:slow=4000', 3000);
  ac.abort();
  await assert.rejects(pending);
  await waitFor(() => mock.aborted > before, 2000);
  await assertStillServing(gw);
});
