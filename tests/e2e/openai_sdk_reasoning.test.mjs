// End-to-end: what an OpenAI-compatible reasoning upstream sends (DeepSeek's and vLLM's
// reasoning_content, the usage details objects, prompt-cache reads) as the official OpenAI Node
// SDK sees it, whole and streamed alike: the same members either way, a cost in usage equal to
// the spend row's to the pico-USD with cache reads at their own price, and a cache hit that
// keeps them all whichever way the answer was first produced.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock, reasoningUsage, REASONING_TEXT, DEFAULT_TEXT } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, adminOf, openaiProvider, marker } from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
const PICO = 10n ** 12n;
// USD per token, as configured, and in pico-USD for exact sums.
const PRICES = { input: '0.000001', cached: '0.00000025', output: '0.000002' };
const pico = (usd) => {
  const [whole, frac = ''] = String(usd).split('.');
  return BigInt(whole) * PICO + BigInt(frac.padEnd(12, '0').slice(0, 12));
};
/** A JS number of USD (as the SDK parses it) in pico-USD: exact for the amounts here. */
const picoOf = (n) => pico(n.toFixed(12));
const CACHED = 600;
const ON = { 'tollgate::cache_options': { enabled: 'on' } };

let mock;
let gw;
const client = (apiKey) => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey, maxRetries: 0, timeout: 8000 });
const { keyFor, spend: spendRows } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
const teamWithKey = (name) => keyFor(name, '1');

/** What the mock's reasoning usage with `cached` cache reads costs, in pico-USD. */
function expectedCost(cached) {
  const u = reasoningUsage(cached);
  return BigInt(u.prompt_tokens - cached) * pico(PRICES.input) + BigInt(cached) * pico(PRICES.cached)
    + BigInt(u.completion_tokens) * pico(PRICES.output);
}

// The mock reports 1000 prompt tokens; a request may not be charged more than its body has bytes.
const PADDING = ' pad'.repeat(300);

/** A request of the reasoning model whose prompt carries `directives` and a fresh marker. */
const ask = (directives, extra = {}) => ({
  model: 'reasoning_model',
  messages: [{ role: 'user', content: `${directives} ${marker('reasoning')}${PADDING}` }],
  ...extra,
});

/** The chunks of a stream, collected. */
async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** What a stream's chunks say, put together. */
function streamed(chunks) {
  const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
  return {
    reasoning: deltas.map((d) => d.reasoning_content ?? '').join(''),
    content: deltas.map((d) => d.content ?? '').join(''),
    usage: chunks.find((c) => c.usage)?.usage,
    opening: deltas[0],
  };
}

function assertDetails(usage, cached) {
  const want = reasoningUsage(cached);
  assert.equal(usage.prompt_tokens, want.prompt_tokens);
  assert.equal(usage.completion_tokens, want.completion_tokens);
  assert.deepEqual(usage.prompt_tokens_details, want.prompt_tokens_details);
  assert.deepEqual(usage.completion_tokens_details, want.completion_tokens_details);
}

/** The model under test: priced with a cache-read price of its own. */
const reasoningModel = (upstream) => ({
  input_cost_per_token: Number(PRICES.input),
  cached_input_cost_per_token: Number(PRICES.cached),
  output_cost_per_token: Number(PRICES.output),
  routing: ['primary'],
  providers: { primary: openaiProvider(upstream) },
});

before(async () => {
  mock = await startMock();
  const models = { reasoning_model: reasoningModel(mock.url) };
  const config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { auth: 'required' }, models });
  gw = await startGateway({ config });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

describe('a reasoning upstream via the SDK', () => {
  test('whole: message.reasoning_content, refusal null, the usage details, the cost of the spend row', T, async () => {
    const key = await teamWithKey('whole');
    const c = await client(key).chat.completions.create(ask(`mock:reasoning mock:cached=${CACHED}`));
    const message = c.choices[0].message;
    assert.equal(message.reasoning_content, REASONING_TEXT);
    assert.equal(message.content, DEFAULT_TEXT);
    assert.ok(Object.hasOwn(message, 'refusal'), JSON.stringify(message));
    assert.equal(message.refusal, null);
    assert.deepEqual(Object.keys(message), ['role', 'reasoning_content', 'content', 'refusal']);
    assertDetails(c.usage, CACHED);
    assert.equal(c.usage.prompt_tokens_details.cached_tokens, CACHED);
    assert.equal(c.usage.completion_tokens_details.reasoning_tokens, 30);
    const rows = await spendRows('whole');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].estimated, false);
    assert.equal(picoOf(c.usage['tollgate::cost']), expectedCost(CACHED));
    assert.equal(picoOf(rows[0].cost), expectedCost(CACHED));
  });

  test('streamed: delta.reasoning_content, the usage details, the cost of the spend row', T, async () => {
    const key = await teamWithKey('streamed');
    const s = streamed(await collect(await client(key).chat.completions.create(
      ask(`mock:reasoning mock:cached=${CACHED}`, { stream: true, stream_options: { include_usage: true } }))));
    assert.equal(s.reasoning, REASONING_TEXT);
    assert.equal(s.content, DEFAULT_TEXT);
    assert.equal(s.opening.refusal, null);
    assertDetails(s.usage, CACHED);
    const rows = await spendRows('streamed');
    assert.equal(rows.length, 1);
    assert.equal(picoOf(s.usage['tollgate::cost']), expectedCost(CACHED));
    assert.equal(picoOf(rows[0].cost), expectedCost(CACHED));
  });

  test('cache reads alone (mock:cached=N) are priced at the cached price, whole and streamed', T, async () => {
    const key = await teamWithKey('cached');
    const whole = await client(key).chat.completions.create(ask('mock:cached=250'));
    assert.equal(whole.usage.prompt_tokens_details.cached_tokens, 250);
    assert.equal(whole.choices[0].message.reasoning_content, undefined);
    const s = streamed(await collect(await client(key).chat.completions.create(
      ask('mock:cached=250', { stream: true, stream_options: { include_usage: true } }))));
    assert.equal(s.usage.prompt_tokens_details.cached_tokens, 250);
    const rows = await spendRows('cached');
    assert.equal(rows.length, 2);
    for (const row of rows) assert.equal(picoOf(row.cost), expectedCost(250));
    assert.equal(picoOf(whole.usage['tollgate::cost']), expectedCost(250));
    assert.equal(picoOf(s.usage['tollgate::cost']), expectedCost(250));
  });

  test('a cache hit of a whole answer, asked for as a stream, keeps reasoning_content and the details', T, async () => {
    const key = await teamWithKey('hit-as-stream');
    const request = ask(`mock:reasoning mock:cached=${CACHED}`, ON);
    const first = await client(key).chat.completions.create(request);
    assert.equal(first.choices[0].message.reasoning_content, REASONING_TEXT);
    const hit = streamed(await collect(await client(key).chat.completions.create({
      ...request, stream: true, stream_options: { include_usage: true },
    })));
    assert.equal(hit.reasoning, REASONING_TEXT);
    assert.equal(hit.content, DEFAULT_TEXT);
    assert.equal(hit.opening.refusal, null);
    assertDetails(hit.usage, CACHED);
    assert.equal(hit.usage['tollgate::cost'], 0);
    assert.equal(mock.requests.filter((r) => r.rawBody.includes(request.messages[0].content)).length, 1);
  });

  test('a cache hit of a stream, asked for whole, keeps reasoning_content and the details', T, async () => {
    const key = await teamWithKey('hit-as-whole');
    const request = ask(`mock:reasoning mock:cached=${CACHED}`, ON);
    const first = streamed(await collect(await client(key).chat.completions.create({
      ...request, stream: true, stream_options: { include_usage: true },
    })));
    assert.equal(first.reasoning, REASONING_TEXT);
    const hit = await client(key).chat.completions.create(request);
    const message = hit.choices[0].message;
    assert.equal(message.reasoning_content, REASONING_TEXT);
    assert.equal(message.content, DEFAULT_TEXT);
    assert.equal(message.refusal, null);
    assertDetails(hit.usage, CACHED);
    assert.equal(hit.usage['tollgate::cost'], 0);
    assert.equal(mock.requests.filter((r) => r.rawBody.includes(request.messages[0].content)).length, 1);
  });

  test('an Idempotency-Key retry gets the same members, whole and streamed', T, async () => {
    const key = await teamWithKey('idempotent');
    const once = { headers: { 'Idempotency-Key': `whole-${marker('idem')}` } };
    const request = ask(`mock:reasoning mock:cached=${CACHED}`);
    const first = await client(key).chat.completions.create(request, once);
    const again = await client(key).chat.completions.create(request, once);
    assert.deepEqual(again, first);
    assert.equal(again.choices[0].message.reasoning_content, REASONING_TEXT);
    assertDetails(again.usage, CACHED);
    const streamOnce = { headers: { 'Idempotency-Key': `stream-${marker('idem')}` } };
    const streamRequest = ask(`mock:reasoning mock:cached=${CACHED}`, { stream: true, stream_options: { include_usage: true } });
    const firstStream = await collect(await client(key).chat.completions.create(streamRequest, streamOnce));
    const againStream = await collect(await client(key).chat.completions.create(streamRequest, streamOnce));
    assert.deepEqual(againStream, firstStream);
    assert.equal(streamed(againStream).reasoning, REASONING_TEXT);
    assertDetails(streamed(againStream).usage, CACHED);
    assert.equal((await spendRows('idempotent')).length, 2);
  });
});
