// Server-Sent Events streaming: wire format, usage handling, incremental
// delivery, interrupted upstream streams, client aborts; and the local echo
// ("dummy") model in both modes.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MOCK_USAGE, TOOL_ARGUMENTS, SLOW_CHUNKS, slowPieces } from '../fixtures/mock_upstream.mjs';
import {
  postJson, getJson, chatBody, marker, readSSE, assertChunks, assertCompletion, waitFor, startMockAndGateway, stopAll,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;

before(async () => ({ mock, gw } = await startMockAndGateway()));
after(() => stopAll(gw, mock));

function streamReq(body, { signal } = {}) {
  return fetch(gw.baseURL + CHAT, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
}

function assertSSEResponse(res) {
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
}

const hasUsage = (c) => c.usage !== undefined && c.usage !== null;

describe('streamed chat completions', () => {
  test('wire format: only "data: ...\\n\\n" events, ending with data: [DONE]', T, async () => {
    const res = await streamReq(chatBody('hi'));
    assertSSEResponse(res);
    const text = (await res.text()).replace(/\r\n/g, '\n');
    assert.ok(text.endsWith('data: [DONE]\n\n'), `stream end: ${JSON.stringify(text.slice(-80))}`);
    const blocks = text.split('\n\n').slice(0, -1);
    assert.ok(blocks.length >= 3, `only ${blocks.length} events`);
    for (const b of blocks) {
      if (b.startsWith(':')) continue; // SSE comment (keep-alive) is allowed
      assert.match(b, /^data: /, `event: ${JSON.stringify(b)}`);
      if (b !== 'data: [DONE]') JSON.parse(b.slice(6));
    }
    assert.equal(blocks.filter((b) => b === 'data: [DONE]').length, 1);
  });

  test('chunks are chat.completion.chunk with the client model; text and finish arrive', T, async () => {
    const res = await streamReq(chatBody('hi'));
    assertSSEResponse(res);
    const sse = await readSSE(res);
    assertChunks(sse, 'mock_model');
    assert.equal(sse.content, 'Hello from mock');
    assert.equal(sse.done, true);
    assert.deepEqual(sse.afterDone, []);
    assert.equal(sse.error, undefined);
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'stop'), 'no finish_reason "stop"');
    const ids = new Set(sse.chunks.map((c) => c.id));
    assert.equal(ids.size, 1, 'all chunks of one completion share an id');
  });

  test('without include_usage the client gets no usage chunk', T, async () => {
    const sse = await readSSE(await streamReq(chatBody('hi')));
    assert.equal(sse.done, true);
    const withUsage = sse.chunks.filter(hasUsage);
    assert.deepEqual(withUsage, [], 'usage leaked into the stream');
    assert.ok(sse.chunks.every((c) => c.choices.length > 0), 'a choices:[] (usage) chunk leaked');
  });

  test('with include_usage: a final usage chunk (choices: []) before [DONE]', T, async () => {
    const sse = await readSSE(await streamReq(chatBody('hi', { stream_options: { include_usage: true } })));
    assert.equal(sse.done, true);
    assertChunks(sse, 'mock_model');
    const last = sse.chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.deepEqual(
      { prompt_tokens: last.usage.prompt_tokens, completion_tokens: last.usage.completion_tokens, total_tokens: last.usage.total_tokens },
      MOCK_USAGE,
    );
    assert.equal(sse.chunks.filter((c) => hasUsage(c)).length, 1, 'exactly one chunk carries usage');
  });

  test('stream: false gives a plain JSON completion', T, async () => {
    const r = await postJson(gw.baseURL, CHAT, chatBody('hi', { stream: false }));
    assertCompletion(r, { content: 'Hello from mock' });
  });

  test('chunks arrive incrementally (mock:stream-slow=150, 20 pieces)', T, async () => {
    const t0 = Date.now();
    const res = await streamReq(chatBody('mock:stream-slow=150'));
    assertSSEResponse(res);
    let firstContentAt = null;
    const sse = await readSSE(res, {
      t0,
      onEvent: (ev) => {
        if (firstContentAt === null && ev.json?.choices?.[0]?.delta?.content) firstContentAt = ev.at;
        return false;
      },
    });
    const endAt = sse.events.at(-1).at;
    assert.equal(sse.done, true);
    assert.equal(sse.content, slowPieces().join(''));
    assert.ok(firstContentAt !== null && firstContentAt < 1500, `first content after ${firstContentAt} ms`);
    assert.ok(endAt >= 150 * (SLOW_CHUNKS - 2), `stream ended after ${endAt} ms; upstream needs ~3 s`);
    assert.ok(endAt - firstContentAt >= 1500, `first content at ${firstContentAt} ms, end at ${endAt} ms: buffered?`);
    const contentTimes = sse.events.filter((e) => e.json?.choices?.[0]?.delta?.content).map((e) => e.at);
    const spread = contentTimes.filter((t) => t < endAt - 1000).length;
    assert.ok(spread >= 5, `only ${spread} content chunks arrived more than 1 s before the end`);
  });

  test('concurrent streams are served side by side, not one after another', T, async () => {
    // 5 streams of 20 pieces 50 ms apart: ~1 s each, ~5 s if serialised.
    const t0 = Date.now();
    const results = await Promise.all(Array.from({ length: 5 }, async () => readSSE(await streamReq(chatBody('mock:stream-slow=50')))));
    const took = Date.now() - t0;
    for (const sse of results) {
      assert.equal(sse.done, true);
      assert.equal(sse.content, slowPieces().join(''));
    }
    assert.ok(took < 3500, `5 concurrent 1 s streams took ${took} ms`);
  });

  test('streamed tool call: argument deltas pass through and assemble', T, async () => {
    const sse = await readSSE(await streamReq(chatBody('mock:tools', {
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    })));
    assert.equal(sse.done, true);
    assertChunks(sse, 'mock_model');
    const calls = {};
    for (const c of sse.chunks) {
      for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
        const acc = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
        if (tc.id) acc.id = tc.id;
        if (tc.function?.name) acc.name += tc.function.name;
        if (tc.function?.arguments) acc.arguments += tc.function.arguments;
      }
    }
    assert.deepEqual(Object.keys(calls), ['0']);
    assert.equal(calls[0].name, 'get_weather');
    assert.ok(calls[0].id.length > 0);
    assert.deepEqual(JSON.parse(calls[0].arguments), JSON.parse(TOOL_ARGUMENTS));
    const argChunks = sse.chunks.filter((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments);
    assert.ok(argChunks.length >= 2, 'argument deltas were merged into one chunk');
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls'));
  });
});

describe('interrupted streams', () => {
  test('upstream socket cut mid-stream -> final error event, no [DONE]', T, async () => {
    const res = await streamReq(chatBody('mock:cut'));
    assertSSEResponse(res);
    const sse = await readSSE(res);
    assert.equal(sse.done, false, 'a [DONE] was sent for an interrupted stream');
    assert.ok(sse.error, `no error event; events: ${JSON.stringify(sse.events.map((e) => e.data))}`);
    assert.deepEqual(Object.keys(sse.error).sort(), ['code', 'message', 'param', 'type']);
    for (const k of ['code', 'message', 'param', 'type']) assert.equal(typeof sse.error[k], 'string', k);
    assert.equal(sse.error.code, 'upstream_stream_interrupted');
    assert.equal(sse.events.at(-1).json?.error, sse.error, 'the error event must be the last event');
    assert.ok(sse.content.startsWith('Hello'), `content before the cut: ${JSON.stringify(sse.content)}`);
  });

  test('upstream error event mid-stream -> final error event, no [DONE]', T, async () => {
    const res = await streamReq(chatBody('mock:stream-error'));
    assertSSEResponse(res);
    const sse = await readSSE(res);
    assert.equal(sse.done, false);
    assert.ok(sse.error, `no error event; events: ${JSON.stringify(sse.events.map((e) => e.data))}`);
    for (const k of ['code', 'message', 'param', 'type']) assert.equal(typeof sse.error[k], 'string', k);
    assert.ok(sse.error.code.length > 0);
    assert.equal(sse.events.at(-1).json?.error, sse.error, 'the error event must be the last event');
  });

  test('client disconnect mid-stream closes the upstream request', T, async () => {
    const before = mock.aborted;
    const ac = new AbortController();
    const res = await streamReq(chatBody('mock:stream-slow=200'), { signal: ac.signal });
    assertSSEResponse(res);
    let got = 0;
    await readSSE(res, { onEvent: (ev) => (ev.json?.choices?.[0]?.delta?.content ? ++got >= 2 : false) });
    ac.abort();
    const t0 = Date.now();
    await waitFor(() => mock.aborted > before, 3000).catch(() => {
      assert.fail(`upstream request not closed within 3 s of the client leaving (aborted ${mock.aborted}, was ${before})`);
    });
    assert.ok(Date.now() - t0 < 3000);
  });

  test('upstream stream of unparseable events -> an error (502 or error event), never [DONE]', T, async () => {
    const res = await streamReq(chatBody('mock:garbage'));
    if (res.status !== 200) {
      const text = await res.text();
      assert.equal(res.status, 502, text);
      const e = JSON.parse(text).error;
      assert.equal(e.code, 'upstream_error');
      return;
    }
    const sse = await readSSE(res);
    assert.equal(sse.done, false, 'garbage upstream stream ended with [DONE]');
    assert.ok(sse.error, `no error event; events: ${JSON.stringify(sse.events.map((e) => e.data))}`);
    assert.equal(typeof sse.error.code, 'string');
  });

  test('gateway still serves after interrupted and aborted streams', T, async () => {
    const r = await getJson(gw.baseURL, '/health');
    assert.equal(r.status, 200);
    const sse = await readSSE(await streamReq(chatBody('hi')));
    assert.equal(sse.done, true);
    assert.equal(sse.content, 'Hello from mock');
  });
});

describe('echo (dummy) model', () => {
  const convo = (last) => [
    { role: 'system', content: 'be an echo' },
    { role: 'user', content: 'first user message' },
    { role: 'assistant', content: 'assistant reply' },
    { role: 'user', content: last },
  ];

  test('non-streamed: echoes the last user message, locally', T, async () => {
    const m = marker('echo');
    const text = `echo me please ${m}`;
    const r = await postJson(gw.baseURL, CHAT, { model: 'echo', messages: convo(text) });
    const c = assertCompletion(r, { model: 'echo', content: text });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(mock.requestsContaining(m).length, 0, 'echo must not call the upstream');
  });

  test('non-streamed: the last *user* message even when an assistant message follows', T, async () => {
    const messages = [...convo('the user said this'), { role: 'assistant', content: 'prefill' }];
    const r = await postJson(gw.baseURL, CHAT, { model: 'echo', messages });
    assertCompletion(r, { model: 'echo', content: 'the user said this' });
  });

  test('non-streamed: unicode and JSON-special characters survive', T, async () => {
    const text = 'quote " backslash \\ newline \n tab \t unicode é 日本 🚀';
    const r = await postJson(gw.baseURL, CHAT, { model: 'echo', messages: convo(text) });
    assertCompletion(r, { model: 'echo', content: text });
  });

  test('streamed: content deltas concatenate to the message; ends with [DONE]', T, async () => {
    const text = 'stream this back to me';
    const res = await streamReq({ model: 'echo', messages: convo(text) });
    assertSSEResponse(res);
    const sse = await readSSE(res);
    assertChunks(sse, 'echo');
    assert.equal(sse.content, text);
    assert.equal(sse.done, true);
    assert.ok(sse.chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    assert.equal(sse.chunks.filter(hasUsage).length, 0);
  });

  test('streamed with include_usage: usage chunk present', T, async () => {
    const res = await streamReq({ model: 'echo', messages: convo('count me'), stream_options: { include_usage: true } });
    const sse = await readSSE(res);
    assert.equal(sse.done, true);
    assert.equal(sse.content, 'count me');
    const u = sse.chunks.filter(hasUsage);
    assert.equal(u.length, 1);
    for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) assert.ok(Number.isInteger(u[0].usage[k]), k);
  });

  test('validation applies to echo too (n = 2 -> 400)', T, async () => {
    const r = await postJson(gw.baseURL, CHAT, { model: 'echo', messages: convo('x'), n: 2 });
    assert.equal(r.status, 400);
    assert.equal(r.json?.error?.code, 'invalid_value');
  });
});
