// Prompt caching behind an Anthropic provider, through the official OpenAI SDK: the client's
// cache_control breakpoints reach Anthropic on the same blocks (and what Anthropic could not take
// is refused before anything is sent), and Anthropic's cache reads and writes come back as
// usage.prompt_tokens_details.cached_tokens and usage["tollgate::cache_write_tokens"] (of them
// the 1-hour ones as usage["tollgate::cache_write_1h_tokens"]), each kind charged at its own
// price: usage["tollgate::cost"] and the spend row's cost are the priced usage to the pico-USD,
// whole and streamed. A split of the writes that does not add up is estimated and flagged. An
// OpenAI-compatible provider receives cache_control as the client sent it.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startAnthropicMock, anthropicModel, ANTHROPIC_USAGE, WEATHER_TOOL } from '../fixtures/anthropic_upstream.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, GATEWAY_DEFAULTS, openaiProvider, adminOf, marker, sdkError } from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
// Pico-USD per token of each kind: Anthropic's ratios (reads 0.1x, 5-minute writes 1.25x,
// 1-hour writes 2x the input price).
const PICO = Object.freeze({ input: 3_000_000n, output: 15_000_000n, cached: 300_000n, write: 3_750_000n, write1h: 6_000_000n });
const usd = (pico) => Number(pico) / 1e12; // Exact for these prices: each is a short decimal.
const PRICES = {
  input_cost_per_token: usd(PICO.input),
  output_cost_per_token: usd(PICO.output),
  cached_input_cost_per_token: usd(PICO.cached),
  cache_write_cost_per_token: usd(PICO.write),
  cache_write_1h_cost_per_token: usd(PICO.write1h),
};
const pico = (dollars) => BigInt(Math.round(dollars * 1e12));
// A long system prompt worth caching: its bytes also bound the prompt tokens the request may be
// charged for, above every count the mock reports here.
const POLICY = 'Answer questions about the travel policy below, citing its sections. '.repeat(60);
const READS = 2000;
const WRITES = 1000;
const HOUR = 400;

let mock;
let openai;
let gw;
let client;
let cases = 0;
const { keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));

before(async () => {
  mock = await startAnthropicMock();
  openai = await startMock();
  gw = await startGateway({
    config: {
      gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
      models: {
        claude: anthropicModel(mock.url, PRICES),
        gpt: { ...PRICES, routing: ['primary'], providers: { primary: openaiProvider(openai.url) } },
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: await keyFor('cachers', '10'), maxRetries: 0, timeout: 8000 });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
  await openai?.close();
});

/** Messages with the policy as a cached system part and `question` as the last user text. */
const cachedMessages = (question, ttl = '1h') => [
  { role: 'system', content: [{ type: 'text', text: POLICY, cache_control: { type: 'ephemeral', ttl } }] },
  { role: 'user', content: [{ type: 'text', text: question }] },
];

/** The exact charge of an Anthropic usage object at PICO. */
function priced(u) {
  const hour = BigInt(u.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  const writes = BigInt(u.cache_creation_input_tokens ?? 0);
  return BigInt(u.input_tokens) * PICO.input + BigInt(u.cache_read_input_tokens ?? 0) * PICO.cached +
    (writes - hour) * PICO.write + hour * PICO.write1h + BigInt(u.output_tokens) * PICO.output;
}

/** Asks `question` (whole, or streamed with the usage chunk); its usage and its spend row. */
async function ask(question, { stream = false } = {}) {
  const tag = `case${++cases}`;
  const body = { model: 'claude', messages: cachedMessages(question), 'tollgate::tags': { case: tag } };
  let usage;
  if (stream) {
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } })) {
      if (chunk.usage) usage = chunk.usage;
    }
  } else {
    usage = (await client.chat.completions.create(body)).usage;
  }
  const rows = await spend('cachers', '--tag', `case=${tag}`);
  assert.equal(rows.length, 1);
  return { usage, row: rows[0] };
}

describe('cache_control reaches Anthropic on the same blocks', () => {
  test('a system part, a text part, an image part and a tool', T, async () => {
    const m = marker('breakpoints');
    const tool = { ...WEATHER_TOOL, cache_control: { type: 'ephemeral' } };
    await client.chat.completions.create({
      model: 'claude',
      tools: [tool],
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'rules' }, { type: 'text', text: POLICY, cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '5m' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' }, cache_control: { type: 'ephemeral' } },
            { type: 'text', text: `question ${m}` },
          ],
        },
      ],
    });
    const sent = mock.find(m).body;
    assert.deepEqual(sent.system, [
      { type: 'text', text: 'rules' },
      { type: 'text', text: POLICY, cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    assert.deepEqual(sent.messages[0].content.map((b) => b.cache_control), [
      { type: 'ephemeral', ttl: '5m' }, { type: 'ephemeral' }, undefined,
    ]);
    assert.equal(sent.messages[0].content[1].type, 'image');
    assert.deepEqual(sent.tools[0].cache_control, { type: 'ephemeral' });
    assert.equal(sent.tools[0].name, WEATHER_TOOL.function.name);
  });

  test('an OpenAI-compatible provider receives cache_control as sent, refused or not', T, async () => {
    const m = marker('openai');
    const content = Array(5).fill({ type: 'ephemeral', ttl: '24h' }).map((cache_control) => ({ type: 'text', text: m, cache_control }));
    const tools = [{ ...WEATHER_TOOL, cache_control: { type: 'ephemeral' } }];
    await client.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content }], tools });
    const sent = openai.requests.findLast((r) => r.rawBody.includes(m)).body;
    assert.deepEqual(sent.messages[0].content, content);
    assert.deepEqual(sent.tools, tools);
  });

  test('more than 4 breakpoints, or one Anthropic does not know, is a 400 before anything is sent', T, async () => {
    const refusals = [
      [Array(5).fill({ type: 'ephemeral' }), 'at most 4'],
      [[{ type: 'ephemeral', ttl: '24h' }], 'cache_control must be'],
      [[{ type: 'persistent' }], 'cache_control must be'],
    ];
    for (const [controls, message] of refusals) {
      const m = marker('refused');
      const content = controls.map((cache_control, i) => ({ type: 'text', text: `part ${i} ${m}`, cache_control }));
      const err = await sdkError(() => client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content }] }));
      assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.code, 'invalid_value');
      assert.equal(err.param, 'messages');
      assert.match(err.message, new RegExp(message));
      assert.equal(mock.find(m), undefined, 'the upstream was asked');
    }
  });
});

describe('cache reads and writes are priced each at its own price', () => {
  const directives = `mock:cache-read=${READS} mock:cache-write=${WRITES} mock:cache-1h=${HOUR}`;
  const upstream = {
    ...ANTHROPIC_USAGE,
    cache_read_input_tokens: READS,
    cache_creation_input_tokens: WRITES,
    cache_creation: { ephemeral_5m_input_tokens: WRITES - HOUR, ephemeral_1h_input_tokens: HOUR },
  };
  const prompt = ANTHROPIC_USAGE.input_tokens + READS + WRITES;

  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'whole'}: the kinds in usage, and its cost is the spend row's`, T, async () => {
      const { usage, row } = await ask(`what does it say? ${directives}`, { stream });
      assert.equal(usage.prompt_tokens, prompt);
      assert.equal(usage.completion_tokens, ANTHROPIC_USAGE.output_tokens);
      assert.equal(usage.total_tokens, prompt + ANTHROPIC_USAGE.output_tokens);
      assert.equal(usage.prompt_tokens_details.cached_tokens, READS);
      assert.equal(usage['tollgate::cache_write_tokens'], WRITES);
      assert.equal(usage['tollgate::cache_write_1h_tokens'], HOUR);
      const want = priced(upstream);
      assert.equal(pico(usage['tollgate::cost']), want);
      assert.equal(pico(row.cost), want);
      assert.equal(row.prompt_tokens, prompt);
      assert.equal(row.estimated, false);
    });
  }

  test('without the split every write is a 5-minute one', T, async () => {
    const { usage, row } = await ask(`again? mock:cache-read=${READS} mock:cache-write=${WRITES} mock:no-split`);
    assert.equal(usage['tollgate::cache_write_tokens'], WRITES);
    assert.equal(usage['tollgate::cache_write_1h_tokens'], undefined);
    const want = priced({ ...ANTHROPIC_USAGE, cache_read_input_tokens: READS, cache_creation_input_tokens: WRITES });
    assert.equal(pico(usage['tollgate::cost']), want);
    assert.equal(pico(row.cost), want);
  });

  test('a split that does not add up to the writes is estimated and flagged', T, async () => {
    for (const stream of [false, true]) {
      const { row } = await ask(`lies? ${directives} mock:bad-split`, { stream });
      assert.equal(row.estimated, true, stream ? 'streamed' : 'whole');
    }
  });
});
