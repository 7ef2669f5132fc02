// Azure OpenAI (docs/providers.md): a model whose provider has type "azure" is called at its
// deployment's address with `api-version` and the `api-key` header (never a bearer token), for
// chat, streams and embeddings; the answers keep Azure's content filter results and are billed as
// an OpenAI upstream's; a prompt the content filter refuses is 400 upstream_invalid_request naming
// its categories, never retried; the key never reaches the client.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startAzureMock, AZURE_API_VERSION, SAFE_RESULTS } from '../fixtures/azure_upstream.mjs';
import { DEFAULT_TEXT, MOCK_USAGE, TOOL_ARGUMENTS } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, GATEWAY_DEFAULTS, adminOf, postJson, chatBody, readSSE, UPSTREAM_KEY, UPSTREAM_KEY_ENV,
} from '../fixtures/gateway.mjs';

const DEPLOYMENT = 'gpt-4o prod';
const PATH = `/openai/deployments/gpt-4o%20prod/chat/completions?api-version=${AZURE_API_VERSION}`;
// 12 prompt tokens x 0.000001 + 4 completion tokens x 0.000002 USD.
const COST = 0.00002;

const sqlite = ENGINES.find((e) => e.name === 'sqlite');

function azureProvider(url, extra = {}) {
  return {
    type: 'azure', api_base: url, model: DEPLOYMENT, api_version: AZURE_API_VERSION,
    api_key: `env::${UPSTREAM_KEY_ENV}`, first_byte_timeout_ms: 3000, total_timeout_ms: 10000, ...extra,
  };
}

describe('an Azure OpenAI deployment', () => {
  let store;
  let mock;
  let refusing;
  let gw;
  const { keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
  let key;
  const post = (body, path = '/v1/chat/completions') =>
    postJson(gw.baseURL, path, body, { headers: { authorization: `Bearer ${key}` } });

  before(async () => {
    store = await sqlite.start();
    mock = await startAzureMock({ apiKey: UPSTREAM_KEY });
    refusing = await startAzureMock({ apiKey: 'another-key' });
    gw = await startGateway({
      config: {
        gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
        storage: store.storage,
        models: {
          azure_chat: {
            input_cost_per_token: 0.000001,
            output_cost_per_token: 0.000002,
            routing: ['azure'],
            retries: { num_retries: 2, max_delay_ms: 20 },
            providers: { azure: azureProvider(mock.url) },
          },
          azure_refused: { routing: ['azure'], providers: { azure: azureProvider(refusing.url) } },
          azure_whisper: {
            endpoint: 'transcription',
            cost_per_audio_second: 0.0001,
            routing: ['azure'],
            providers: { azure: azureProvider(mock.url, { model: 'whisper' }) },
          },
          azure_embed: {
            endpoint: 'embedding',
            input_cost_per_token: 0.000001,
            routing: ['azure'],
            providers: { azure: azureProvider(mock.url, { model: 'embed-prod' }) },
          },
        },
      },
      env: { ...store.env, [UPSTREAM_KEY_ENV]: UPSTREAM_KEY },
    });
    key = await keyFor('azure', '10');
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
    await refusing?.close();
    store?.stop();
  });

  test('a whole answer: the deployment, api-version and api-key; the filters kept; billed', async () => {
    const r = await post(chatBody('hi', {}, 'azure_chat'));
    assert.equal(r.status, 200, r.text);
    const sent = mock.requests.at(-1);
    assert.equal(sent.url, PATH);
    assert.equal(sent.headers['api-key'], UPSTREAM_KEY);
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(r.json.model, 'azure_chat');
    assert.equal(r.json.choices[0].message.content, DEFAULT_TEXT);
    assert.deepEqual(r.json.choices[0].content_filter_results, SAFE_RESULTS);
    assert.deepEqual(r.json.prompt_filter_results?.[0]?.content_filter_results, SAFE_RESULTS);
    assert.equal(r.json.usage.prompt_tokens, MOCK_USAGE.prompt_tokens);
    assert.equal(r.json.usage['tollgate::cost'], COST);
    const row = (await spend('azure')).find((x) => x.request_id === r.headers.get('x-request-id'));
    assert.equal(row?.cost, COST, JSON.stringify(row));
  });

  test('a stream: Azure\'s prompt-filter chunk relayed, the text whole, the usage billed', async () => {
    const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(chatBody('hi', { stream: true, stream_options: { include_usage: true } }, 'azure_chat')),
    });
    assert.equal(res.status, 200);
    const sse = await readSSE(res);
    assert.equal(sse.done, true);
    const { chunks } = sse;
    const text = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
    assert.equal(text, DEFAULT_TEXT);
    assert.ok(chunks.some((c) => c.prompt_filter_results), 'the prompt filter results are kept');
    assert.ok(chunks.every((c) => c.model === 'azure_chat'), 'every chunk names our model');
    assert.equal(chunks.at(-1).usage?.['tollgate::cost'], COST);
  });

  test('a streamed tool call is relayed whole', async () => {
    const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(chatBody('weather? mock:tools', { stream: true }, 'azure_chat')),
    });
    const sse = await readSSE(res);
    const args = sse.chunks.map((c) => c.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    assert.equal(args, TOOL_ARGUMENTS);
  });

  test('a prompt the content filter refuses: 400 naming its categories, tried once', async () => {
    const before = mock.requests.length;
    const r = await post(chatBody('something mock:content-filter', {}, 'azure_chat'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'upstream_invalid_request');
    assert.match(r.json.error.message, /content filter refused the prompt \(hate: high, violence: medium\)/);
    assert.equal(mock.requests.length - before, 1, 'never retried');
  });

  test('a completion the filter stops keeps finish_reason content_filter', async () => {
    const r = await post(chatBody('mock:filtered-completion', {}, 'azure_chat'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].finish_reason, 'content_filter');
  });

  test('a refused key: 502 upstream_auth_failed, and the key never reaches the client', async () => {
    const r = await post(chatBody('hi', {}, 'azure_refused'));
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.error.code, 'upstream_auth_failed');
    assert.equal(refusing.requests.at(-1).headers['api-key'], UPSTREAM_KEY, 'the refused key was sent');
    assert.ok(!r.text.includes(UPSTREAM_KEY), r.text);
  });

  test('embeddings at the embedding deployment', async () => {
    const r = await post({ model: 'azure_embed', input: ['a', 'b'] }, '/v1/embeddings');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.length, 2);
    assert.equal(mock.requests.at(-1).url, `/openai/deployments/embed-prod/embeddings?api-version=${AZURE_API_VERSION}`);
  });

  test('a transcription at the whisper deployment, the upload passed through', async () => {
    const fd = new FormData();
    fd.append('model', 'azure_whisper');
    fd.append('file', new Blob([Buffer.alloc(4000, 7)], { type: 'audio/mpeg' }), 'memo.mp3');
    const r = await fetch(`${gw.baseURL}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: fd });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    const sent = mock.requests.at(-1);
    assert.equal(sent.url, `/openai/deployments/whisper/audio/transcriptions?api-version=${AZURE_API_VERSION}`);
    assert.equal(sent.headers['api-key'], UPSTREAM_KEY);
    const up = mock.inner.requests.at(-1);
    assert.equal(up.form?.file?.size, 4000, JSON.stringify(up.form));
    assert.equal(typeof JSON.parse(text).text, 'string');
  });
});
