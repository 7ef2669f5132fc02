// A client that hangs up before a non-streamed answer arrives: the gateway must abandon the
// upstream request at once instead of waiting for (and paying for) an answer nobody reads.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  postJson, chatBody, waitFor, assertStillServing, startMockAndGateway, stopAll,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
let mock;
let gw;

before(async () => ({ mock, gw } = await startMockAndGateway()));
after(() => stopAll(gw, mock));

test('client abort during a slow non-streamed completion closes the upstream request', T, async () => {
  const before = mock.aborted;
  const ac = new AbortController();
  const pending = postJson(gw.baseURL, '/v1/chat/completions', chatBody('mock:slow=4000'), { signal: ac.signal });
  await waitFor(() => mock.requests.length > 0 && mock.requests.at(-1).body?.messages?.at(-1)?.content === 'mock:slow=4000', 3000);
  ac.abort();
  await assert.rejects(pending);
  const t0 = Date.now();
  await waitFor(() => mock.aborted > before, 2000);
  assert.ok(Date.now() - t0 < 2000, 'the upstream request outlived the client by more than 2 s');
  await assertStillServing(gw);
});
