// The hold bounds what the upstream can bill, so a charge is always the priced usage: against a
// mock upstream that uses every token it is not denied (mock:bill-max), the gateway sends the
// output limit its hold covers (the client's, capped by the model's max_output_tokens, else the
// model's default_max_tokens) and holds for a function variant's system prompt; each row's cost
// is then its tokens at the model's prices, whole and streamed. And an Anthropic stream cut
// before its final usage is charged for what was relayed, not message_start's one output token.
// Usage that is not counts is missing (estimated, flagged), never zero; counts past what the
// request could use are clamped to its bound (flagged), so no answer can poison the aggregates.
// On every engine (SQLite, and PostgreSQL in the `postgres` tier).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, billMaxUsage, HOSTILE_USAGE } from '../fixtures/mock_upstream.mjs';
import { startAnthropicMock, anthropicModel, OPENAI_USAGE } from '../fixtures/anthropic_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, openaiProvider, postJson, chatBody, adminOf, waitFor,
} from '../fixtures/gateway.mjs';

const IN_PICO = 1_000_000n; // 0.000001 USD a prompt token
const OUT_PICO = 2_000_000n; // 0.000002 USD a completion token
const PRICES = { input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 };
const VARIANT_PROMPT = 'Answer as a pirate would. '.repeat(820); // about 21 KB
const STREAMED = { stream: true, stream_options: { include_usage: true } };

const pico = (usd) => BigInt(Math.round(usd * 1e12));
const priced = (row) => BigInt(row.prompt_tokens) * IN_PICO + BigInt(row.completion_tokens) * OUT_PICO;

for (const engine of ENGINES) describe(`holds bound the upstream: every charge is the priced usage, on ${engine.name}`, { skip: engine.skip }, () => {
  let mock;
  let anthropic;
  let store;
  let gw;
  let key;
  let cases = 0;
  const { keyFor, spend, ok } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
  const model = (limits) => ({
    ...PRICES, ...limits, routing: ['primary'], providers: { primary: openaiProvider(mock.url) },
  });

  /** Sends `body`; returns the answer, the upstream's copy of the request and its spend row. */
  async function billed(body) {
    const tag = `case${++cases}`;
    const r = await postJson(gw.baseURL, '/v1/chat/completions', { ...body, 'tollgate::tags': { case: tag } },
      { headers: { authorization: `Bearer ${key}` } });
    assert.equal(r.status, 200, r.text);
    if (body.model === 'claude') {
      return { r, row: (await spend('bounds', '--tag', `case=${tag}`))[0] };
    }
    const sent = mock.requests.filter((q) => q.url === '/v1/chat/completions').at(-1).body;
    const rows = await spend('bounds', '--tag', `case=${tag}`);
    assert.equal(rows.length, 1);
    return { r, sent, row: rows[0] };
  }

  /** The row is the upstream's whole usage, charged at the model's prices, nothing capped. */
  function assertPricedUsage(sent, row) {
    const usage = billMaxUsage(sent);
    assert.equal(row.prompt_tokens, usage.prompt_tokens);
    assert.equal(row.completion_tokens, usage.completion_tokens);
    assert.equal(row.estimated, false);
    assert.equal(pico(row.cost), priced(row), `charged ${row.cost} USD for ${row.prompt_tokens} + ${row.completion_tokens} tokens`);
  }

  before(async () => {
    mock = await startMock();
    anthropic = await startAnthropicMock();
    store = await engine.start();
    gw = await startGateway({
      config: {
        gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
        storage: store.storage,
        models: {
          no_limits: model({}),
          capped: model({ max_output_tokens: 100 }),
          short_default: model({ default_max_tokens: 50 }),
          piratical: model({}),
          claude: anthropicModel(anthropic.url, PRICES),
        },
        functions: {
          pirate: { variants: { long_prompt: { model: 'piratical', weight: 1, system_prompt: VARIANT_PROMPT } } },
        },
      },
      env: store.env,
    });
    key = await keyFor('bounds', '100');
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
    await anthropic?.close();
    store?.stop();
  });

  for (const [name, extra] of [['whole', {}], ['streamed', STREAMED]]) {
    test(`no limit anywhere: the upstream is sent the default 4096 and charged for all of it (${name})`, async () => {
      const { sent, row } = await billed(chatBody('mock:bill-max', extra, 'no_limits'));
      assert.equal(sent.max_completion_tokens, 4096);
      assertPricedUsage(sent, row);
    });

    test(`the model's max_output_tokens caps a larger client limit (${name})`, async () => {
      const { sent, row } = await billed(chatBody('mock:bill-max', { max_tokens: 5000, ...extra }, 'capped'));
      assert.equal(sent.max_completion_tokens, 100);
      assert.equal(row.completion_tokens, 100);
      assertPricedUsage(sent, row);
    });

    test(`a function variant's system prompt is held for and charged (${name})`, async () => {
      const { r, sent, row } = await billed(chatBody('mock:bill-max', { max_tokens: 10, ...extra }, 'tollgate::function_name::pirate'));
      assert.match(r.text, /long_prompt/);
      assert.equal(sent.messages[0].content, VARIANT_PROMPT);
      assert.ok(row.prompt_tokens > VARIANT_PROMPT.length, `${row.prompt_tokens} prompt tokens`);
      assertPricedUsage(sent, row);
    });
  }

  test("a model's default_max_tokens is sent when the client sets no limit, the client's own otherwise", async () => {
    let { sent, row } = await billed(chatBody('mock:bill-max', {}, 'short_default'));
    assert.equal(sent.max_completion_tokens, 50);
    assertPricedUsage(sent, row);
    ({ sent, row } = await billed(chatBody('mock:bill-max', { max_completion_tokens: 300 }, 'short_default')));
    assert.equal(sent.max_completion_tokens, 300);
    assertPricedUsage(sent, row);
  });

  test('max_tokens 0 is sent as 0 and holds no output', async () => {
    const { sent, row } = await billed(chatBody('mock:bill-max', { max_tokens: 0 }, 'no_limits'));
    assert.equal(sent.max_completion_tokens, 0);
    assert.equal(row.completion_tokens, 0);
    assertPricedUsage(sent, row);
  });

  test('an Anthropic stream cut before its final usage is charged for what was relayed', async () => {
    const { r, row } = await billed(chatBody('mock:cut=40', STREAMED, 'claude'));
    const relayed = r.text.split('\n\n').filter((e) => e.includes('"content":"tok "')).length;
    assert.equal(relayed, 40, r.text);
    assert.equal(row.estimated, true);
    assert.ok(row.completion_tokens >= 40, `${row.completion_tokens} completion tokens for 40 relayed`);
    // message_start's prompt count, which is exact, is not lost to a smaller estimate.
    assert.ok(row.prompt_tokens >= OPENAI_USAGE.prompt_tokens, `${row.prompt_tokens} prompt tokens`);
    assert.equal(pico(row.cost), priced(row));
  });

  test('usage that is not counts, or counts past the bound, is estimated or clamped and flagged', async () => {
    const rows = [];
    for (const [i, usage] of HOSTILE_USAGE.entries()) {
      for (const extra of [{}, STREAMED]) {
        const body = chatBody(`mock:bad-usage=${i}`, extra, 'no_limits');
        const { row } = await billed(body);
        const what = `${usage} ${extra.stream ? 'streamed' : 'whole'}: ${JSON.stringify(row)}`;
        assert.equal(row.estimated, true, what);
        assert.ok(row.prompt_tokens > 0 && row.prompt_tokens <= JSON.stringify(body).length + 64, what);
        assert.ok(row.completion_tokens > 0 && row.completion_tokens <= 4096, what);
        assert.equal(pico(row.cost), priced(row), what);
        rows.push(row);
      }
    }
    // The daily aggregates still add up, to the token.
    const byModel = JSON.parse((await ok('spend', 'summary', '--team', 'bounds', '--by', 'model', '--json')).stdout);
    const noLimits = byModel.find((g) => g.model === 'no_limits');
    const all = (await spend('bounds')).filter((r) => r.model === 'no_limits');
    assert.equal(noLimits.prompt_tokens, all.reduce((a, r) => a + r.prompt_tokens, 0));
    assert.equal(noLimits.completion_tokens, all.reduce((a, r) => a + r.completion_tokens, 0));
  });

  test('a stream that sends more chunks than its limit, then fails: the estimate is clamped to the bound', async () => {
    const { r, row } = await billed(chatBody('mock:stream-error', { max_tokens: 1, ...STREAMED }, 'no_limits'));
    const content = r.text.split('\n\n').filter((e) => /"content":"[^"]+"/.test(e)).length;
    assert.ok(content > 1, `${content} content chunks relayed: ${r.text}`);
    assert.equal(row.estimated, true);
    assert.equal(row.completion_tokens, 1, JSON.stringify(row));
    assert.equal(pico(row.cost), priced(row));
  });

  test('a stream that reports its usage twice: the client sees one usage chunk, the one charged', async () => {
    const { r, row } = await billed(chatBody('mock:usage-twice', STREAMED, 'no_limits'));
    const usages = r.text.split('\n\n').filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6))).filter((c) => c.usage);
    assert.equal(usages.length, 1, r.text);
    assert.equal(usages[0].usage.prompt_tokens, row.prompt_tokens);
    assert.equal(usages[0].usage.completion_tokens, row.completion_tokens);
    assert.equal(usages[0].usage['tollgate::cost'], row.cost);
    assert.equal(row.estimated, false);
  });

  test('property: random requests against an upstream that bills the most it may', { timeout: 60_000 }, async () => {
    // A seeded generator, so that a failure is replayed by running the test again.
    let seed = 20261124;
    const rand = (n) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const team = 'property';
    const propertyKey = await keyFor(team, '50');
    const show = async () => JSON.parse((await ok('teams', 'show', team, '--json')).stdout);
    const start = await show();
    const limits = { no_limits: null, capped: 100, short_default: 50, piratical: null };
    let charged = 0n;
    let answered = 0;
    for (let i = 0; i < 40; i++) {
      const fn = rand(4) === 0;
      const model = fn ? 'tollgate::function_name::pirate' : ['no_limits', 'capped', 'short_default'][rand(3)];
      const usage = ['mock:bill-max', 'mock:bill-max', `mock:bad-usage=${rand(HOSTILE_USAGE.length)}`][rand(3)];
      const extra = {};
      if (rand(2)) extra.max_tokens = rand(3000);
      if (rand(2)) Object.assign(extra, STREAMED);
      const body = chatBody(`${usage} ${'words '.repeat(rand(200))}`, extra, model);
      const tag = `p${i}`;
      const ac = new AbortController();
      const cut = extra.stream && rand(3) === 0;
      const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
        method: 'POST', signal: ac.signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${propertyKey}` },
        body: JSON.stringify({ ...body, 'tollgate::tags': { case: tag } }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      if (cut) {
        await res.body.getReader().read(); // the first bytes, then the client hangs up
        ac.abort();
      } else {
        await res.text();
      }
      const rows = await waitFor(async () => {
        const r = await spend(team, '--tag', `case=${tag}`);
        return r.length ? r : null;
      }, 5000, 50);
      assert.equal(rows.length, 1, `case ${i}: one row per exchange`);
      const row = rows[0];
      const what = `case ${i} ${JSON.stringify({ model, usage, extra, cut })}: ${JSON.stringify(row)}`;
      // The hold's bound, computed as the gateway computes it, bounds every count charged.
      const variantBytes = fn ? VARIANT_PROMPT.length + '{"role":"system","content":""},'.length : 0;
      const bodyBytes = Buffer.byteLength(JSON.stringify({ ...body, 'tollgate::tags': { case: tag } }));
      const modelLimit = limits[fn ? 'piratical' : model];
      const requested = extra.max_tokens ?? (model === 'short_default' ? 50 : 4096);
      const outputBound = modelLimit === null ? requested : Math.min(requested, modelLimit);
      assert.ok(row.prompt_tokens >= 0 && row.prompt_tokens <= bodyBytes + variantBytes, what);
      assert.ok(row.completion_tokens >= 0 && row.completion_tokens <= Math.max(outputBound, 1) + 200, what);
      // The charge is the priced usage, to the pico-USD.
      assert.equal(pico(row.cost), priced(row), what);
      charged += pico(row.cost);
      answered += 1;
    }
    // The balance moved by exactly the rows' costs, and nothing stays held.
    const end = await waitFor(async () => {
      const t = await show();
      return t.reserved === 0 ? t : null;
    }, 5000, 100);
    assert.equal(answered, 40);
    assert.ok(end.balance >= 0);
    assert.equal(pico(start.balance) - pico(end.balance), charged);
  });
});
