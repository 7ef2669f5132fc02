// The inference cache (tollgate::cache_options) through HTTP, on every engine: on, off,
// read_only and write_only; max_age_s and [cache] retention_seconds; a hit answered whole or as a
// stream whichever way the answer was first produced; team isolation; ZDR and TEE models never
// cached; dryrun reads only; hits charged nothing and logged as hits; embeddings and rerank; two
// gateways sharing hits on one store; options refused with a clear error.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, mockEmbedding, MOCK_USAGE, DEFAULT_TEXT } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError,
  openaiProvider, endpointModel, marker, waitFor, sleep,
} from '../fixtures/gateway.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });
const ON = { 'tollgate::cache_options': { enabled: 'on' } };
const withCache = (enabled, extra = {}) => ({ 'tollgate::cache_options': { enabled, ...extra } });

/** The events of an SSE body, parsed; `[DONE]` as the string. */
function events(text) {
  return text.split('\n\n').filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6)).map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}

/** The text a stream's chunks carry. */
const streamedText = (text) => events(text).filter((e) => e !== '[DONE]')
  .map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

for (const engine of ENGINES) {
  describe(`inference cache on ${engine.name}`, { skip: engine.skip }, () => {
    let store;
    let mock;
    let gw;
    let config;
    const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    let key;
    let other;
    /** Requests the mock received whose last message holds `m`. */
    const upstreamCalls = (m) => mock.requests.filter((r) => r.rawBody.includes(m)).length;

    before(async () => {
      store = await engine.start();
      mock = await startMock();
      const dead = `http://127.0.0.1:${await closedPort()}/v1`;
      config = standardConfig(mock.url, dead, {
        gateway: { auth: 'required' },
        models: {
          cached_model: {
            input_cost_per_token: 0.000001,
            output_cost_per_token: 0.000002,
            routing: ['primary'],
            providers: { primary: openaiProvider(mock.url) },
          },
          embed_model: endpointModel('embedding', mock.url, 'embed-upstream', { input_cost_per_token: 0.000001 }),
          rerank_model: endpointModel('rerank', mock.url, 'rerank-upstream', { input_cost_per_token: 0.000001 }),
        },
      });
      config.functions = {
        cached_fn: { variants: { v: { model: 'cached_model', weight: 1, system_prompt: 'Prompt A.' } } },
      };
      config.storage = store.storage;
      gw = await startGateway({ config, env: store.env });
      key = await keyFor('cache-a', '10');
      other = await keyFor('cache-b', '10');
    });

    after(async () => {
      await gw?.stop();
      await mock?.close();
      store?.stop();
    });

    const chat = (content, extra = {}, k = key, model = 'cached_model') =>
      postJson(gw.baseURL, '/v1/chat/completions', chatBody(content, extra, model), { headers: bearer(k) });

    test('on: the second identical request is a hit, charged nothing, logged as a hit', async () => {
      const m = marker('on');
      const first = await chat(m, ON);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('tollgate-cache'), 'miss');
      assert.equal(first.json['tollgate::cache_hit'], undefined);
      const second = await chat(m, ON);
      assert.equal(second.status, 200, second.text);
      assert.equal(second.headers.get('tollgate-cache'), 'hit');
      assert.equal(second.json['tollgate::cache_hit'], true);
      assert.equal(upstreamCalls(m), 1);
      // A new answer: a new id and episode; the same message and counts.
      assert.notEqual(second.json.id, first.json.id);
      assert.notEqual(second.json.episode_id, first.json.episode_id);
      assert.equal(second.json.object, 'chat.completion');
      assert.deepEqual(second.json.choices, first.json.choices);
      assert.equal(second.json.usage.prompt_tokens, MOCK_USAGE.prompt_tokens);
      assert.equal(second.json.usage['tollgate::cost'], 0);
      const rows = await waitFor(async () => {
        const r = (await spend('cache-a')).filter((row) => row.request_id === second.headers.get('x-request-id'));
        return r.length === 1 ? r : null;
      }, 5000, 50);
      assert.equal(rows[0].cache_hit, true);
      assert.equal(rows[0].cost, 0);
      assert.equal(rows[0].prompt_tokens, MOCK_USAGE.prompt_tokens);
      assert.equal(rows[0].completion_tokens, MOCK_USAGE.completion_tokens);
      const table = (await ok('spend', 'list', '--team', 'cache-a')).stdout;
      assert.match(table, /hit/i);
    });

    test('key order, whitespace, 1 vs 1.0, tags and episode ids do not change the key; a parameter does', async () => {
      const m = marker('norm');
      const a = await postJson(gw.baseURL, '/v1/chat/completions',
        `{"model":"cached_model","temperature":1,"messages":[{"role":"user","content":"${m}"}],"tollgate::cache_options":{"enabled":"on"}}`,
        { headers: bearer(key) });
      assert.equal(a.status, 200, a.text);
      const b = await postJson(gw.baseURL, '/v1/chat/completions',
        `{ "tollgate::cache_options" : {"enabled":"on"}, "messages" : [ {"content":"${m}", "role":"user"} ], "temperature": 1.0, "model":"cached_model", "tollgate::tags": {"x":"y"}, "tollgate::episode_id": "0190f4f0-0000-7000-8000-000000000000" }`,
        { headers: bearer(key) });
      assert.equal(b.headers.get('tollgate-cache'), 'hit', b.text);
      const c = await chat(m, { ...ON, temperature: 0.5 });
      assert.equal(c.headers.get('tollgate-cache'), 'miss');
      assert.equal(upstreamCalls(m), 2);
    });

    test('a streamed answer is replayed whole, and a whole one as a well-formed stream', async () => {
      const m = marker('stream');
      const streamed = await chat(m, { ...ON, stream: true });
      assert.equal(streamed.status, 200);
      assert.equal(streamedText(streamed.text), DEFAULT_TEXT);
      const whole = await chat(m, ON);
      assert.equal(whole.headers.get('tollgate-cache'), 'hit');
      assert.equal(whole.json.choices[0].message.content, DEFAULT_TEXT);
      assert.equal(whole.json.choices[0].finish_reason, 'stop');
      assert.equal(whole.json.usage.completion_tokens, MOCK_USAGE.completion_tokens);
      const replayed = await chat(m, { ...ON, stream: true, stream_options: { include_usage: true } });
      assert.equal(replayed.headers.get('tollgate-cache'), 'hit');
      assert.match(replayed.headers.get('content-type'), /^text\/event-stream/);
      const evs = events(replayed.text);
      assert.equal(evs.at(-1), '[DONE]');
      const chunks = evs.slice(0, -1);
      assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c['tollgate::cache_hit'] === true));
      assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
      assert.equal(streamedText(replayed.text), DEFAULT_TEXT);
      assert.equal(chunks.at(-1).usage.prompt_tokens, MOCK_USAGE.prompt_tokens);
      assert.deepEqual(chunks.at(-1).choices, []);
      assert.equal(upstreamCalls(m), 1);
    });

    test('a function\'s answer is keyed by its variant as configured; a restarted gateway reads the store', async () => {
      const m = marker('fn');
      const fn = (k = key) => chat(m, ON, k, 'tollgate::function_name::cached_fn');
      assert.equal((await fn()).headers.get('tollgate-cache'), 'miss');
      assert.equal((await fn()).headers.get('tollgate-cache'), 'hit');
      const restart = async (prompt) => {
        await gw.stop();
        config.functions.cached_fn.variants.v.system_prompt = prompt;
        gw = await startGateway({ config, env: store.env });
      };
      // The variant's prompt changed: another request, though its name is the same.
      await restart('Prompt B.');
      assert.equal((await fn()).headers.get('tollgate-cache'), 'miss');
      // Back to the first prompt: the memory is new, the store has the answer.
      await restart('Prompt A.');
      const fromStore = await fn();
      assert.equal(fromStore.headers.get('tollgate-cache'), 'hit');
      assert.equal(fromStore.json.variant_name, 'v');
      assert.equal(upstreamCalls(m), 2);
    });

    test('a stream that failed is never kept', async () => {
      const m = marker('cut');
      const failed = await chat(`${m} mock:stream-error`, { ...ON, stream: true });
      assert.equal(failed.status, 200);
      assert.ok(!failed.text.includes('[DONE]'));
      const again = await chat(`${m} mock:stream-error`, { ...ON, stream: true });
      assert.equal(again.headers.get('tollgate-cache'), 'miss');
      assert.equal(upstreamCalls(m), 2);
    });

    test('off, read_only and write_only', async () => {
      const m = marker('modes');
      await chat(m, withCache('read_only'));      // reads, writes nothing
      const w = await chat(m, withCache('write_only'));  // never reads, writes
      assert.equal(w.headers.get('tollgate-cache'), null);
      const off = await chat(m, withCache('off'));
      assert.equal(off.headers.get('tollgate-cache'), null);
      assert.equal(upstreamCalls(m), 3);
      const r = await chat(m, withCache('read_only'));
      assert.equal(r.headers.get('tollgate-cache'), 'hit');
      const none = await chat(m);  // no options: off by default
      assert.equal(none.headers.get('tollgate-cache'), null);
      const unsaid = await chat(m, { 'tollgate::cache_options': { max_age_s: 60 } });  // enabled: off
      assert.equal(unsaid.headers.get('tollgate-cache'), null);
      assert.equal(upstreamCalls(m), 5);
    });

    test('max_age_s filters reads: an older entry is a miss', async () => {
      const m = marker('age');
      await chat(m, ON);
      await sleep(1100);
      const fresh = await chat(m, withCache('on', { max_age_s: 60 }));
      assert.equal(fresh.headers.get('tollgate-cache'), 'hit');
      const stale = await chat(m, withCache('on', { max_age_s: 0 }));
      assert.equal(stale.headers.get('tollgate-cache'), 'miss');
      assert.equal(upstreamCalls(m), 2);
    });

    test('an entry past [cache] retention_seconds is never answered, whatever max_age_s', async () => {
      const short = await startGateway({ config: { ...config, cache: { retention_seconds: 1 } }, env: store.env });
      try {
        const m = marker('retention');
        const ask = (extra) => postJson(short.baseURL, '/v1/chat/completions', chatBody(m, extra, 'cached_model'),
          { headers: bearer(key) });
        assert.equal((await ask({ ...ON, stream: true })).headers.get('tollgate-cache'), 'miss');
        assert.equal((await ask(ON)).headers.get('tollgate-cache'), 'hit');
        await sleep(1100);
        // Still in the gateway's memory, and not yet pruned from the store: past retention all
        // the same, whole or streamed.
        for (const extra of [{}, { stream: true }]) {
          const stale = await ask({ ...withCache('read_only', { max_age_s: 3600 }), ...extra });
          assert.equal(stale.status, 200, stale.text);
          assert.equal(stale.headers.get('tollgate-cache'), 'miss');
        }
        assert.equal(upstreamCalls(m), 3);
      } finally {
        await short.stop();
      }
    });

    test('team B never gets team A\'s answer', async () => {
      const m = marker('teams');
      await chat(m, ON, key);
      const b = await chat(m, ON, other);
      assert.equal(b.headers.get('tollgate-cache'), 'miss');
      assert.equal(upstreamCalls(m), 2);
    });

    test('answers of ZDR and TEE models are never cached', async () => {
      for (const model of ['mock_model', 'tee_model']) {
        const m = marker(model);
        await chat(m, ON, key, model);
        const again = await chat(m, ON, key, model);
        assert.equal(again.status, 200);
        assert.notEqual(again.headers.get('tollgate-cache'), 'hit');
        assert.equal(upstreamCalls(m), 2, model);
      }
    });

    test('a dryrun reads the cache but never writes it', async () => {
      const m = marker('dry');
      const dry = await chat(m, { ...ON, 'tollgate::dryrun': true });
      assert.equal(dry.status, 200);
      const after = await chat(m, ON);
      assert.equal(after.headers.get('tollgate-cache'), 'miss');
      const dryHit = await chat(m, { ...ON, 'tollgate::dryrun': true });
      assert.equal(dryHit.headers.get('tollgate-cache'), 'hit');
      assert.equal(upstreamCalls(m), 2);
    });

    test('embeddings are cached input by input: a batch with one new text pays for one text', async () => {
      const m = marker('emb');
      const embed = (input) => postJson(gw.baseURL, '/v1/embeddings',
        { model: 'tollgate::embedding_model_name::embed_model', input, ...ON }, { headers: bearer(key) });
      const a = await embed([`${m}-a`, `${m}-b`]);
      assert.equal(a.status, 200, a.text);
      assert.equal(a.headers.get('tollgate-cache'), 'miss');
      // Every input found: answered from the cache, charged nothing.
      const b = await embed([`${m}-b`, `${m}-a`]);
      assert.equal(b.headers.get('tollgate-cache'), 'hit');
      assert.equal(b.json['tollgate::cache_hit'], true);
      assert.deepEqual(b.json.data.map((d) => d.index), [0, 1]);
      assert.deepEqual(b.json.data[0].embedding, a.json.data[1].embedding);
      assert.deepEqual(b.json.data[1].embedding, a.json.data[0].embedding);
      assert.equal(b.json.usage['tollgate::cost'], 0);
      // One new input among found ones: only it goes upstream, and only it is charged.
      const c = await embed([`${m}-a`, `${m}-new`, `${m}-b`]);
      assert.equal(c.status, 200, c.text);
      assert.equal(c.headers.get('tollgate-cache'), 'partial');
      assert.deepEqual(c.json.data.map((d) => d.index), [0, 1, 2]);
      assert.deepEqual(c.json.data[0].embedding, a.json.data[0].embedding);
      assert.deepEqual(c.json.data[2].embedding, a.json.data[1].embedding);
      const sent = mock.requests.filter((r) => r.rawBody.includes(`${m}-new`));
      assert.equal(sent.length, 1);
      assert.deepEqual(sent[0].body.input, [`${m}-new`]);
      const single = await embed(`${m}-new`);  // a bare string is one item: found
      assert.equal(single.headers.get('tollgate-cache'), 'hit');
      assert.deepEqual(single.json.data[0].embedding, c.json.data[1].embedding);
      assert.equal(upstreamCalls(m), 2);
      const rows = await waitFor(async () => {
        const ids = [a, b, c].map((r) => r.headers.get('x-request-id'));
        const r = (await spend('cache-a')).filter((row) => ids.includes(row.request_id));
        return r.length === 3 ? r : null;
      }, 5000, 50);
      const byId = Object.fromEntries(rows.map((row) => [row.request_id, row]));
      assert.equal(byId[b.headers.get('x-request-id')].cache_hit, true);
      assert.equal(byId[b.headers.get('x-request-id')].cost, 0);
      const partial = byId[c.headers.get('x-request-id')];
      assert.equal(partial.cache_hit, false);
      assert.equal(partial.prompt_tokens, sent[0].body && c.json.usage.prompt_tokens);
      assert.ok(partial.cost > 0);
      assert.ok(partial.cost < byId[a.headers.get('x-request-id')].cost);
    });

    test('embeddings are kept by the upstream\'s index, not where its items come', async () => {
      const m = marker('embidx');
      const embed = (input) => postJson(gw.baseURL, '/v1/embeddings',
        { model: 'tollgate::embedding_model_name::embed_model', input, ...ON }, { headers: bearer(key) });
      const [a, b, c, d] = [`${m}-a mock:reversed`, `${m}-b`, `${m}-c mock:reversed`, `${m}-d`];
      // The whole batch sent, answered in reverse order.
      const first = await embed([a, b]);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.json.data.map((x) => x.index), [0, 1]);
      assert.deepEqual(first.json.data.map((x) => x.embedding), [mockEmbedding(a), mockEmbedding(b)]);
      // Part of a batch sent (c and d), answered in reverse order, merged with b found.
      const partial = await embed([b, c, d]);
      assert.equal(partial.status, 200, partial.text);
      assert.equal(partial.headers.get('tollgate-cache'), 'partial');
      assert.deepEqual(partial.json.data.map((x) => x.embedding), [b, c, d].map((t) => mockEmbedding(t)));
      // Each input was kept under its own text.
      const hit = await embed([d, c, b, a]);
      assert.equal(hit.headers.get('tollgate-cache'), 'hit');
      assert.deepEqual(hit.json.data.map((x) => x.embedding), [d, c, b, a].map((t) => mockEmbedding(t)));
      assert.equal(upstreamCalls(m), 2);
    });

    test('an embedding list whose indexes are not one per input sent is a 502, and nothing of it is kept', async () => {
      const m = marker('embdup');
      const embed = (input) => postJson(gw.baseURL, '/v1/embeddings',
        { model: 'tollgate::embedding_model_name::embed_model', input, ...ON }, { headers: bearer(key) });
      const bad = await embed([`${m}-a`, `${m}-b mock:index-twice`]);
      assertError(bad, { status: 502, code: 'upstream_error' });
      const again = await embed([`${m}-a`]);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('tollgate-cache'), 'miss');
    });

    test('rerank is cached by the same rules', async () => {
      const q = marker('rerank');
      const rr = { model: 'rerank_model', query: q, documents: ['a', 'b'], ...ON };
      const c = await postJson(gw.baseURL, '/v1/rerank', rr, { headers: bearer(key) });
      assert.equal(c.status, 200, c.text);
      const d = await postJson(gw.baseURL, '/v1/rerank', rr, { headers: bearer(key) });
      assert.equal(d.headers.get('tollgate-cache'), 'hit');
      assert.deepEqual(d.json.results, c.json.results);
      assert.notEqual(d.json.id, c.json.id);
      assert.equal(d.json['tollgate::cache_hit'], true);
      assert.equal(upstreamCalls(q), 1);
    });

    test('bad cache options are refused with a clear error', async () => {
      const cases = [
        [{ 'tollgate::cache_options': 'on' }, 'invalid_type', 'tollgate::cache_options'],
        [{ 'tollgate::cache_options': { enabled: true } }, 'invalid_value', 'tollgate::cache_options.enabled'],
        [{ 'tollgate::cache_options': { enabled: 'yes' } }, 'invalid_value', 'tollgate::cache_options.enabled'],
        [{ 'tollgate::cache_options': { enabled: 'on', max_age_s: -1 } }, 'invalid_value', 'tollgate::cache_options.max_age_s'],
        [{ 'tollgate::cache_options': { enabled: 'on', max_age_s: 1.5 } }, 'invalid_value', 'tollgate::cache_options.max_age_s'],
        [{ 'tollgate::cache_options': { enabled: 'on', ttl: 5 } }, 'unknown_parameter', 'tollgate::cache_options.ttl'],
      ];
      for (const [extra, code, param] of cases) {
        const r = await chat('x', extra);
        assertError(r, { status: 400, code, param });
      }
      const e = await postJson(gw.baseURL, '/v1/embeddings',
        { model: 'tollgate::embedding_model_name::embed_model', input: 'x', 'tollgate::cache_options': { enabled: 1 } },
        { headers: bearer(key) });
      assertError(e, { status: 400, code: 'invalid_value', param: 'tollgate::cache_options.enabled' });
    });

    test('two gateways on one store share hits', { skip: engine.name !== 'postgres' && 'shared by gateways on PostgreSQL' }, async () => {
      const second = await startGateway({ config, env: store.env });
      try {
        const m = marker('shared');
        const count = () => Number(store.sql('SELECT COUNT(*) FROM inference_cache').trim().split('\n').at(-1).trim());
        const before = count();
        await chat(m, ON);
        // The first gateway writes its answer to the store when its writer is idle.
        await waitFor(() => count() > before, 5000, 50);
        const hit = await postJson(second.baseURL, '/v1/chat/completions', chatBody(m, ON, 'cached_model'), { headers: bearer(key) });
        assert.equal(hit.headers.get('tollgate-cache'), 'hit');
        assert.equal(hit.json.choices[0].message.content, DEFAULT_TEXT);
        assert.equal(upstreamCalls(m), 1);
      } finally {
        await second.stop();
      }
    });
  });
}
