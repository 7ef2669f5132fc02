// The provider's price per kind of token, through HTTP: /v1/models shows the prices configured
// beyond the spec's two; audio a model has no price for is refused before anything is sent; a
// long-context tier prices every token of a request above its threshold, cache reads at the
// tier's read price, with the answer's `tollgate::cost` equal to the spend row's to the
// pico-USD, whole and streamed; a cache-write price above the input price holds more.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, getJson, chatBody, assertError,
  openaiProvider, toToml,
} from '../fixtures/gateway.mjs';

const bearer = (key) => ({ authorization: `Bearer ${key}` });

/** The decimal text of `member`'s number in the JSON text `text` (the first one). */
const numberText = (text, member) => text.match(new RegExp(`"${member}":(-?[0-9.eE+-]+)`))?.[1];

describe('prices per kind of token', () => {
  let store;
  let mock;
  let gw;
  const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));

  before(async () => {
    store = await ENGINES[0].start();
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, {
      gateway: { auth: 'required' },
      models: {
        tiered: {
          input_cost_per_token: 0.000001,
          output_cost_per_token: 0.000002,
          cached_input_cost_per_token: 0.0000001,
          routing: ['p'],
          providers: { p: openaiProvider(mock.url) },
        },
        audio: {
          input_cost_per_token: 0.0000025,
          output_cost_per_token: 0.00001,
          input_audio_cost_per_token: 0.00004,
          output_audio_cost_per_token: 0.00008,
          routing: ['p'],
          providers: { p: openaiProvider(mock.url) },
        },
        writes: {
          input_cost_per_token: 0.000001,
          output_cost_per_token: 0.000001,
          cache_write_1h_cost_per_token: 0.000002,
          routing: ['p'],
          providers: { p: openaiProvider(mock.url) },
        },
      },
    });
    config.storage = store.storage;
    // Above 500 input tokens: every token of the request at the tier's prices.
    const tiers = '\n[[models.tiered.price_tiers]]\nabove_input_tokens = 500\n' +
      'input_cost_per_token = 0.000003\noutput_cost_per_token = 0.000004\n' +
      'cached_input_cost_per_token = 0.0000003\n' +
      '\n[[models.tiered.price_tiers]]\nabove_input_tokens = 100000\ninput_cost_per_token = 0.00001\n';
    gw = await startGateway({ toml: toToml(config) + tiers });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
    store?.stop();
  });

  test('/v1/models shows the configured prices beside the two, and the tiers', async () => {
    const key = await keyFor('catalogue', '1');
    const r = await getJson(gw.baseURL, '/v1/models/tiered', { headers: bearer(key) });
    assert.equal(r.status, 200, r.text);
    assert.equal(numberText(r.text, 'cached_input_cost_per_token'), '0.0000001');
    assert.equal(r.json.cache_write_cost_per_token, undefined, 'not configured, not shown');
    assert.equal(r.json.input_audio_cost_per_token, undefined);
    assert.deepEqual(r.json.price_tiers.map((t) => t.above_input_tokens), [500, 100000]);
    assert.equal(r.json.price_tiers[0].input_cost_per_token, 0.000003);
    assert.equal(r.json.price_tiers[0].cached_input_cost_per_token, 0.0000003);
    assert.equal(r.json.price_tiers[1].output_cost_per_token, 0.000002, "the model's output price");
    assert.equal(r.json.model_info.price_tiers, undefined, 'not in the operator\'s model_info');
    const list = await getJson(gw.baseURL, '/v1/models', { headers: bearer(key) });
    const audio = list.json.data.find((m) => m.id === 'audio');
    assert.equal(audio.input_audio_cost_per_token, 0.00004);
    assert.equal(audio.output_audio_cost_per_token, 0.00008);
    assert.equal(audio.price_tiers, undefined);
  });

  test('audio a model has no price for is refused before anything is sent', async () => {
    const key = await keyFor('audio-team', '10');
    const audioPart = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
    const before = mock.requests.length;
    const r = await postJson(gw.baseURL, '/v1/chat/completions', {
      model: 'tiered', messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, audioPart] }],
    }, { headers: bearer(key) });
    assertError(r, { status: 400, code: 'invalid_value', param: 'messages' });
    assert.match(r.json.error.message, /input_audio_cost_per_token/);
    const out = await postJson(gw.baseURL, '/v1/chat/completions',
      chatBody('speak', { modalities: ['text', 'audio'] }, 'tiered'), { headers: bearer(key) });
    assertError(out, { status: 400, code: 'invalid_value', param: 'modalities' });
    assert.equal(mock.requests.length, before, 'nothing was sent upstream');
    const priced = await postJson(gw.baseURL, '/v1/chat/completions', {
      model: 'audio', messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, audioPart] }],
    }, { headers: bearer(key) });
    assert.equal(priced.status, 200, priced.text);
  });

  test('a tier prices every token above its threshold, and the cost is the row\'s to the pico-USD', async () => {
    const key = await keyFor('long', '10');
    // The mock reports 1,000 prompt tokens (800 read from the cache) and 40 completion tokens;
    // the body is padded past 1,000 bytes so that no count passes the request's bound.
    const content = `mock:cached=800 ${'x'.repeat(1200)}`;
    const whole = await postJson(gw.baseURL, '/v1/chat/completions', chatBody(content, {}, 'tiered'),
      { headers: bearer(key) });
    assert.equal(whole.status, 200, whole.text);
    assert.equal(whole.json.usage.prompt_tokens_details.cached_tokens, 800);
    // 200 x 0.000003 + 800 x 0.0000003 + 40 x 0.000004 = 0.0006 + 0.00024 + 0.00016
    assert.equal(numberText(whole.text, 'tollgate::cost'), '0.001');
    const streamed = await postJson(gw.baseURL, '/v1/chat/completions',
      chatBody(content, { stream: true, stream_options: { include_usage: true } }, 'tiered'),
      { headers: bearer(key) });
    assert.equal(streamed.status, 200);
    const usageEvent = streamed.text.split('\n\n').find((e) => e.includes('"usage":{'));
    assert.equal(numberText(usageEvent, 'tollgate::cost'), '0.001');
    const rows = await spend('long');
    assert.equal(rows.length, 2);
    const listed = (await ok('spend', 'list', '--team', 'long', '--json')).stdout;
    for (const cost of listed.matchAll(/"cost":([0-9.eE+-]+)/g)) assert.equal(cost[1], '0.001');
    assert.ok(rows.every((row) => row.estimated === false && row.prompt_tokens === 1000));
  });

  test('a cache-write price above the input price holds every prompt token at it', async () => {
    await ok('teams', 'create', 'writer', '--balance', '0.000001');
    const key = (await ok('keys', 'create', '--team', 'writer', '--name', 'k')).stdout.trim();
    const body = chatBody('hi', { max_tokens: 1 }, 'writes');
    const r = await postJson(gw.baseURL, '/v1/chat/completions', body, { headers: bearer(key) });
    assertError(r, { status: 403, code: 'insufficient_balance' });
    // One token per byte of the body at the 1-hour write price, one output token.
    const bytes = BigInt(Buffer.byteLength(JSON.stringify(body)));
    const hold = bytes * 2_000_000n + 1_000_000n;
    const usd = `0.${hold.toString().padStart(12, '0')}`.replace(/0+$/, '');
    assert.ok(r.json.error.message.includes(`may cost up to ${usd} USD`), r.json.error.message);
  });
});
