// POST /v1/embeddings: what the upstream sees, the answer the client gets (model as sent, base64
// conversion both ways), the Deprecation header of unprefixed names, every validation error,
// upstream failures, billing on a priced model, and the embedded default config's echo_* models.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENGINES } from '../fixtures/engines.mjs';
import {
  startMock, mockEmbedding, mockEmbeddingTokens, embeddingItems, base64ToFloats, floatsToBase64,
  MOCK_EMBEDDING_DIMENSIONS, UPSTREAM_ERROR_MESSAGES,
} from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, openaiProvider, closedPort, adminOf, endpointModel, postJson, chatBody, marker,
  assertError, UPSTREAM_KEY, TOLLGATE_BIN,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const EMB = '/v1/embeddings';
const PREFIX = 'tollgate::embedding_model_name::';
const DEPRECATION = '@1795392000';
const IN_PRICE = 0.000001;

let store;
let mock;
let gw;
let key;

const bearer = (k) => ({ authorization: `Bearer ${k}` });
const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));

const embed = (body, { k = key, headers = {} } = {}) => postJson(gw.baseURL, EMB, body, { headers: { ...bearer(k), ...headers } });

before(async () => {
  store = await ENGINES[0].start();
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const embModel = (upstream, extra = {}, provider = {}) => endpointModel('embedding', mock.url, upstream, extra, provider);
  const config = standardConfig(mock.url, dead, {
    gateway: { auth: 'required' },
    models: {
      emb: embModel('emb-upstream'),
      emb_b64: embModel('emb-upstream mock:base64-ok'),
      emb_b64_always: embModel('emb-upstream mock:base64-always'),
      emb_quick: embModel('emb-upstream', {}, { first_byte_timeout_ms: 500, total_timeout_ms: 5000 }),
      emb_dead: { endpoint: 'embedding', routing: ['dead'], providers: { dead: openaiProvider(dead, { connect_timeout_ms: 1000 }) } },
      emb_priced: embModel('emb-priced-upstream', { input_cost_per_token: IN_PRICE, max_input_tokens: 1000 }),
      rr: { endpoint: 'rerank', routing: ['primary'], providers: { primary: openaiProvider(mock.url, { model: 'rr-upstream' }) } },
    },
  });
  config.storage = store.storage;
  gw = await startGateway({ config, env: store.env });
  key = await keyFor('emb-main', '100');
});

after(async () => {
  await gw?.stop();
  await mock?.close();
  store?.stop();
});

/** Sends `body` (with a marker in its first string input, or as a tag) and returns the one upstream copy. */
async function forwarded(body, opts) {
  const m = marker('emb');
  const b = structuredClone(body);
  if (typeof b.input === 'string') b.input += ` ${m}`;
  else if (Array.isArray(b.input) && typeof b.input[0] === 'string') b.input[0] += ` ${m}`;
  else b['tollgate::tags'] = { ...(b['tollgate::tags'] ?? {}), marker: m };
  const { r, up } = await mock.forwardedOnce('/embeddings', () => embed(b, opts));
  assert.equal(r.status, 200, r.text);
  return { r, up, sent: b };
}

/** Asserts an embedding list answer for `input` with the mock's vectors; returns it. */
function assertList(r, { model, input, dims = MOCK_EMBEDDING_DIMENSIONS }) {
  const ctx = `response was ${r.status} ${r.text.slice(0, 400)}`;
  assert.equal(r.status, 200, ctx);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const j = r.json;
  assert.equal(j.object, 'list', ctx);
  assert.equal(j.model, model, ctx);
  const items = embeddingItems(input);
  assert.equal(j.data.length, items.length, ctx);
  j.data.forEach((d, i) => {
    assert.equal(d.object, 'embedding', ctx);
    assert.equal(d.index, i, ctx);
    assert.deepEqual(d.embedding, mockEmbedding(items[i], dims), `data[${i}].embedding`);
  });
  const tokens = mockEmbeddingTokens(input);
  assert.equal(j.usage.prompt_tokens, tokens, ctx);
  assert.equal(j.usage.total_tokens, tokens, ctx);
  return j;
}

describe('embeddings: forwarding', () => {
  test('the upstream gets exactly model (replaced), input, dimensions, encoding_format and user', T, async () => {
    const body = {
      model: `${PREFIX}emb`,
      input: ['the quick brown fox', 'jumps'],
      dimensions: 5,
      encoding_format: 'float',
      user: 'user-42',
      'tollgate::tags': { feature: 'search' },
      'tollgate::cache_options': { enabled: 'off' },
      'tollgate::dryrun': false,
      'tollgate::deny_unknown_fields': false,
      some_unknown_field: { nested: true },
    };
    const { r, up, sent } = await forwarded(body);
    assert.equal(up.method, 'POST');
    assert.equal(up.url, '/v1/embeddings');
    assert.match(up.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(up.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.deepEqual(up.body, { model: 'emb-upstream', input: sent.input, dimensions: 5, encoding_format: 'float', user: 'user-42' });
    assertList(r, { model: `${PREFIX}emb`, input: sent.input, dims: 5 });
    assert.equal(r.headers.get('deprecation'), null);
  });

  test('without the optional fields only model and input go upstream', T, async () => {
    const { up, sent } = await forwarded({ model: `${PREFIX}emb`, input: 'hello' });
    assert.deepEqual(up.body, { model: 'emb-upstream', input: sent.input });
  });

  const shapes = [
    ['a string', 'one two three'],
    ['an array of strings', ['alpha beta', 'gamma', 'delta epsilon zeta']],
    ['an array of token ids', [101, 2023, 0, 2147483647]],
    ['an array of token-id arrays', [[1, 2, 3], [4], [5, 6]]],
  ];
  for (const [name, input] of shapes) {
    test(`input as ${name} is forwarded as is and answered item by item`, T, async () => {
      const { r, up, sent } = await forwarded({ model: `${PREFIX}emb`, input });
      assert.deepEqual(up.body.input, sent.input);
      assertList(r, { model: `${PREFIX}emb`, input: sent.input });
    });
  }

  test('a bare model id works but carries Deprecation; the prefixed form does not', T, async () => {
    const bare = await embed({ model: 'emb', input: 'hi' });
    assertList(bare, { model: 'emb', input: 'hi' });
    assert.equal(bare.headers.get('deprecation'), DEPRECATION);
    const prefixed = await embed({ model: `${PREFIX}emb`, input: 'hi' });
    assertList(prefixed, { model: `${PREFIX}emb`, input: 'hi' });
    assert.equal(prefixed.headers.get('deprecation'), null);
    assert.match(gw.stderr, /deprecated: embedding model 'emb'/);
  });
});

describe('embeddings: base64', () => {
  test('client base64, upstream floats: the gateway sends base64 of little-endian float32', T, async () => {
    const { r, up } = await forwarded({ model: `${PREFIX}emb`, input: ['one', 'two words'], encoding_format: 'base64' });
    assert.equal(up.body.encoding_format, 'base64');
    const upstream = JSON.parse(up.answer);
    assert.ok(Array.isArray(upstream.data[0].embedding), 'the mock answered floats');
    assert.equal(r.json.data.length, 2);
    r.json.data.forEach((d, i) => {
      assert.equal(typeof d.embedding, 'string', `data[${i}] is not base64: ${JSON.stringify(d.embedding).slice(0, 80)}`);
      const bytes = Buffer.from(d.embedding, 'base64');
      assert.equal(bytes.length, 4 * MOCK_EMBEDDING_DIMENSIONS);
      const floats = new Float32Array(new Uint8Array(bytes).buffer);
      assert.deepEqual(Array.from(floats), upstream.data[i].embedding);
      assert.equal(d.embedding, floatsToBase64(upstream.data[i].embedding));
    });
  });

  test('client base64, upstream base64: passed through unchanged', T, async () => {
    const { r, up } = await forwarded({ model: `${PREFIX}emb_b64`, input: 'x y', encoding_format: 'base64' });
    const upstream = JSON.parse(up.answer);
    assert.equal(typeof upstream.data[0].embedding, 'string', 'the mock answered base64');
    assert.equal(r.json.data[0].embedding, upstream.data[0].embedding);
  });

  test('client float (default), upstream base64: the gateway decodes to floats', T, async () => {
    const { r, up, sent } = await forwarded({ model: `${PREFIX}emb_b64_always`, input: ['p q', 'r'] });
    const upstream = JSON.parse(up.answer);
    assert.equal(typeof upstream.data[0].embedding, 'string', 'the mock answered base64');
    r.json.data.forEach((d, i) => {
      assert.deepEqual(d.embedding, base64ToFloats(upstream.data[i].embedding));
    });
    assertList(r, { model: `${PREFIX}emb_b64_always`, input: sent.input });
  });
});

describe('embeddings: validation', () => {
  const M = `${PREFIX}emb`;
  const cases = [
    ['input empty string', { model: M, input: '' }, 'invalid_value', 'input'],
    ['input empty array', { model: M, input: [] }, 'invalid_value', 'input'],
    ['input number', { model: M, input: 5 }, 'invalid_type', 'input'],
    ['input object', { model: M, input: { text: 'a' } }, 'invalid_type', 'input'],
    ['input boolean', { model: M, input: true }, 'invalid_type', 'input'],
    ['an empty string item', { model: M, input: ['a', ''] }, 'invalid_value', 'input[1]'],
    ['strings then a number', { model: M, input: ['a', 1] }, 'invalid_type', 'input'],
    ['a token id then a string', { model: M, input: [1, 'a'] }, 'invalid_type', 'input'],
    ['a negative token id', { model: M, input: [-1] }, 'invalid_type', 'input'],
    ['a fractional token id', { model: M, input: [1.5] }, 'invalid_type', 'input'],
    ['a token id past int32', { model: M, input: [2147483648] }, 'invalid_type', 'input'],
    ['an empty token array item', { model: M, input: [[1, 2], []] }, 'invalid_value', 'input[1]'],
    ['a token array then a string', { model: M, input: [[1], 'a'] }, 'invalid_type', 'input'],
    ['a bad id in a token array', { model: M, input: [[1], [2, 'x']] }, 'invalid_type', 'input[1]'],
    ['an array holding null', { model: M, input: [null] }, 'invalid_type', 'input'],
    ['more than 2048 inputs', { model: M, input: Array(2049).fill('a') }, 'invalid_value', 'input'],
    ['input missing', { model: M }, 'missing_required_parameter', 'input'],
    ['model missing', { input: 'a' }, 'missing_required_parameter', 'model'],
    ['model a number', { model: 5, input: 'a' }, 'invalid_type', 'model'],
    ['model empty', { model: '', input: 'a' }, 'invalid_value', 'model'],
    ['dimensions 0', { model: M, input: 'a', dimensions: 0 }, 'invalid_value', 'dimensions'],
    ['dimensions negative', { model: M, input: 'a', dimensions: -3 }, 'invalid_value', 'dimensions'],
    ['dimensions past int32', { model: M, input: 'a', dimensions: 2147483648 }, 'invalid_value', 'dimensions'],
    ['dimensions a string', { model: M, input: 'a', dimensions: '4' }, 'invalid_type', 'dimensions'],
    ['dimensions fractional', { model: M, input: 'a', dimensions: 1.5 }, 'invalid_type', 'dimensions'],
    ['encoding_format unknown', { model: M, input: 'a', encoding_format: 'int8' }, 'invalid_value', 'encoding_format'],
    ['encoding_format upper case', { model: M, input: 'a', encoding_format: 'FLOAT' }, 'invalid_value', 'encoding_format'],
    ['encoding_format a number', { model: M, input: 'a', encoding_format: 1 }, 'invalid_type', 'encoding_format'],
    ['user a number', { model: M, input: 'a', user: 7 }, 'invalid_type', 'user'],
    ['cache_options a string', { model: M, input: 'a', 'tollgate::cache_options': 'off' }, 'invalid_type', 'tollgate::cache_options'],
    ['dryrun a string', { model: M, input: 'a', 'tollgate::dryrun': 'yes' }, 'invalid_type', 'tollgate::dryrun'],
    ['deny_unknown_fields a number', { model: M, input: 'a', 'tollgate::deny_unknown_fields': 1 }, 'invalid_type', 'tollgate::deny_unknown_fields'],
    ['tags not strings', { model: M, input: 'a', 'tollgate::tags': { n: 1 } }, 'invalid_tags', 'tollgate::tags.n'],
    ['tags an array', { model: M, input: 'a', 'tollgate::tags': ['a'] }, 'invalid_tags', 'tollgate::tags'],
    ['unknown fields denied', { model: M, input: 'a', zeta: 1, alpha: 2, 'tollgate::deny_unknown_fields': true }, 'unknown_parameter', 'alpha'],
    ['a body that is an array', [{ model: M, input: 'a' }], 'invalid_type', ''],
    ['a body that is not JSON', '{"model": "emb", "input": ', 'invalid_json', undefined],
    ['a duplicate key', `{"model": "${M}", "input": "a", "input": "b"}`, 'invalid_json', undefined],
  ];
  for (const [name, body, code, param] of cases) {
    test(`${name} -> 400 ${code}${param === undefined ? '' : ` (param ${JSON.stringify(param)})`}`, T, async () => {
      const before = mock.requests.length;
      const r = await embed(body);
      assertError(r, { status: 400, type: 'invalid_request_error', code, param });
      assert.equal(mock.requests.length, before, 'nothing goes upstream');
    });
  }

  test('deny_unknown_fields with only known fields is accepted', T, async () => {
    assertList(await embed({ model: `${PREFIX}emb`, input: 'a', 'tollgate::deny_unknown_fields': true }), { model: `${PREFIX}emb`, input: 'a' });
  });

  test('explicit nulls of optional fields mean "not given"', T, async () => {
    const { up, sent } = await forwarded({ model: `${PREFIX}emb`, input: 'nulls', dimensions: null, encoding_format: null, user: null });
    assert.deepEqual(up.body, { model: 'emb-upstream', input: sent.input });
  });

  test('a Content-Type that is not JSON -> 415', T, async () => {
    const res = await fetch(gw.baseURL + EMB, { method: 'POST', headers: { 'content-type': 'text/plain', ...bearer(key) }, body: JSON.stringify({ model: `${PREFIX}emb`, input: 'a' }) });
    const text = await res.text();
    assertError({ status: res.status, headers: res.headers, text, json: JSON.parse(text) }, { status: 415, code: 'unsupported_media_type' });
  });

  test('no API key -> 401 before anything else', T, async () => {
    const r = await postJson(gw.baseURL, EMB, { model: `${PREFIX}emb`, input: 'a' });
    assertError(r, { status: 401, code: 'missing_api_key' });
  });

  test('a model configured for another endpoint -> 400 model_wrong_endpoint (param model)', T, async () => {
    for (const model of [`${PREFIX}mock_model`, 'mock_model', `${PREFIX}rr`, 'rr']) {
      const r = await embed({ model, input: 'a' });
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'model_wrong_endpoint', param: 'model' });
    }
    // And the other way round: an embedding model on chat completions.
    const c = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'emb'), { headers: bearer(key) });
    assertError(c, { status: 400, code: 'model_wrong_endpoint', param: 'model' });
  });

  test('an unknown model -> 404 model_not_found, prefixed or bare, without Deprecation', T, async () => {
    for (const model of [`${PREFIX}nope`, 'nope', `${PREFIX}`, `${PREFIX}${PREFIX}emb`]) {
      const r = await embed({ model, input: 'a' });
      assertError(r, { status: 404, code: 'model_not_found' });
      assert.equal(r.headers.get('deprecation'), null, `model ${model}`);
    }
  });
});

describe('embeddings: upstream failures', () => {
  const cases = [
    ['mock:status=500', 'emb', 502, 'upstream_error'],
    ['mock:status=503', 'emb', 502, 'upstream_error'],
    ['mock:status=429', 'emb', 429, 'upstream_rate_limited'],
    ['mock:status=400', 'emb', 400, 'upstream_invalid_request'],
    ['mock:status=401', 'emb', 502, 'upstream_auth_failed'],
    ['mock:garbage', 'emb', 502, 'upstream_error'],
    ['mock:cut', 'emb', 502, 'upstream_error'],
    ['mock:slow=2000', 'emb_quick', 504, 'upstream_timeout'],
    ['hello', 'emb_dead', 502, 'upstream_unavailable'],
  ];
  for (const [directive, model, status, code] of cases) {
    test(`${model} with "${directive}" -> ${status} ${code}`, T, async () => {
      const t0 = Date.now();
      const r = await embed({ model: `${PREFIX}${model}`, input: [`some text ${directive}`] });
      const e = assertError(r, { status, code });
      if (code === 'upstream_invalid_request') assert.equal(e.message, UPSTREAM_ERROR_MESSAGES[400]);
      if (code === 'upstream_timeout') assert.ok(Date.now() - t0 < 1900, `took ${Date.now() - t0} ms`);
    });
  }
});

describe('embeddings: billing', () => {
  test('a priced model: one spend row with endpoint embedding, prompt_tokens x input price; dryrun writes none', T, async () => {
    const k = await keyFor('emb-bill', '1');
    const input = ['one two three four', 'five six'];
    const r = await embed({ model: `${PREFIX}emb_priced`, input, 'tollgate::tags': { feature: 'vec' } }, { k });
    assertList(r, { model: `${PREFIX}emb_priced`, input });
    const tokens = mockEmbeddingTokens(input);
    assert.equal(tokens, 6);
    assert.equal(r.json.usage['tollgate::cost'], tokens * IN_PRICE);
    const rows = await spend('emb-bill');
    assert.equal(rows.length, 1);
    const row = rows[0];
    assert.equal(row.endpoint, 'embedding');
    assert.equal(row.model, 'emb_priced');
    assert.equal(row.status, 200);
    assert.equal(row.prompt_tokens, tokens);
    assert.equal(row.completion_tokens, 0);
    assert.equal(row.cost, tokens * IN_PRICE);
    assert.equal(row.estimated, false);
    assert.deepEqual(row.tags, { feature: 'vec' });
    assert.equal(row.request_id, r.headers.get('x-request-id'));

    const dry = await embed({ model: `${PREFIX}emb_priced`, input, 'tollgate::dryrun': true }, { k });
    assertList(dry, { model: `${PREFIX}emb_priced`, input });
    assert.equal(dry.json.usage['tollgate::cost'], undefined);
    assert.equal((await spend('emb-bill')).length, 1, 'dryrun writes no spend row');
  });

  test('a balance that cannot cover the bound -> 403 insufficient_balance, nothing sent upstream', T, async () => {
    const k = await keyFor('emb-poor', '0.000001');
    const before = mock.requests.length;
    const r = await embed({ model: `${PREFIX}emb_priced`, input: 'a b c d e f g h' }, { k });
    assertError(r, { status: 403, code: 'insufficient_balance' });
    assert.equal(mock.requests.length, before);
  });
});

// The embedded default binds 127.0.0.1:8080, a fixed port: it runs in a private network
// namespace (unshare -rn), where that port is its own, with the client beside it.
const unshareWorks = (() => {
  try {
    return spawnSync('unshare', ['-rn', 'ip', 'link', 'set', 'lo', 'up'], { timeout: 5000 }).status === 0;
  } catch { return false; }
})();

describe('the embedded default config', { skip: unshareWorks ? false : 'needs unshare -rn (user and network namespaces)' }, () => {
  test('serves echo_embedding, echo_rerank and echo_transcription', { timeout: 30_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-default-'));
    const script = `
      import { spawn } from 'node:child_process';
      const [bin, dataDir] = process.argv.slice(1);
      const gw = spawn(bin, ['serve', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const keyAndPort = await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no listening line: ' + out)), 10000);
        gw.stdout.setEncoding('utf8').on('data', (d) => {
          out += d;
          const k = out.match(/^export TOLLGATE_API_KEY=(\\S+)$/m);
          const p = out.match(/^tollgate listening on 127\\.0\\.0\\.1:(\\d+)/m);
          if (k && p) { clearTimeout(t); resolve({ key: k[1], port: p[1] }); }
        });
        gw.once('exit', (c) => reject(new Error('exited ' + c + ': ' + out)));
      });
      const base = 'http://127.0.0.1:' + keyAndPort.port;
      const auth = { authorization: 'Bearer ' + keyAndPort.key };
      const res = {};
      const call = async (name, path, init) => {
        const r = await fetch(base + path, { method: 'POST', ...init, headers: { ...auth, ...(init.headers || {}) } });
        res[name] = { status: r.status, contentType: r.headers.get('content-type'), deprecation: r.headers.get('deprecation'), text: await r.text() };
      };
      try {
        await call('embedding', '/v1/embeddings', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tollgate::embedding_model_name::echo_embedding', input: ['hello world', 'hello'], dimensions: 16 }) });
        await call('embedding_b64', '/v1/embeddings', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'echo_embedding', input: 'hello world', dimensions: 16, encoding_format: 'base64' }) });
        await call('rerank', '/v1/rerank', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'echo_rerank', query: 'red apple', documents: ['a green pear', 'a red apple', { text: 'red car' }], return_documents: true }) });
        const fd = new FormData();
        fd.append('model', 'echo_transcription');
        fd.append('response_format', 'verbose_json');
        fd.append('file', new Blob([new Uint8Array(32000)], { type: 'audio/mpeg' }), 'clip.mp3');
        await call('transcription', '/v1/audio/transcriptions', { body: fd });
        await call('wrong', '/v1/embeddings', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'echo', input: 'a' }) });
      } finally {
        gw.kill('SIGTERM');
      }
      process.stdout.write(JSON.stringify(res));
    `;
    const child = spawn('unshare', ['-rn', 'sh', '-c', 'ip link set lo up && exec "$0" --input-type=module -e "$1" "$2" "$3"',
      process.execPath, script, TOLLGATE_BIN, dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    const code = await new Promise((resolve) => child.once('close', resolve));
    clearTimeout(timer);
    fs.rmSync(dataDir, { recursive: true, force: true });
    assert.equal(code, 0, `the namespaced client failed: ${stderr}`);
    const res = JSON.parse(stdout);

    assert.equal(res.embedding.status, 200, res.embedding.text);
    const e = JSON.parse(res.embedding.text);
    assert.equal(e.object, 'list');
    assert.equal(e.model, 'tollgate::embedding_model_name::echo_embedding');
    assert.equal(e.data.length, 2);
    for (const d of e.data) assert.equal(d.embedding.length, 16);
    assert.equal(e.usage.prompt_tokens, 3);
    assert.equal(res.embedding.deprecation, null);

    assert.equal(res.embedding_b64.status, 200, res.embedding_b64.text);
    assert.equal(res.embedding_b64.deprecation, DEPRECATION);
    const b = JSON.parse(res.embedding_b64.text);
    assert.deepEqual(base64ToFloats(b.data[0].embedding), e.data[0].embedding, 'the same text, the same vector');

    assert.equal(res.rerank.status, 200, res.rerank.text);
    const rr = JSON.parse(res.rerank.text);
    assert.deepEqual(rr.results.map((x) => x.index), [1, 2, 0]);
    assert.deepEqual(rr.results.map((x) => x.relevance_score), [1, 0.5, 0]);
    assert.deepEqual(rr.results.map((x) => x.document.text), ['a red apple', 'red car', 'a green pear']);
    assert.equal(rr.meta.billed_units.search_units, 1);

    assert.equal(res.transcription.status, 200, res.transcription.text);
    assert.match(res.transcription.contentType, /^application\/json/);
    const tx = JSON.parse(res.transcription.text);
    assert.equal(tx.duration, 2);
    assert.match(tx.text, /32000 bytes/);

    assert.equal(res.wrong.status, 400);
    assert.equal(JSON.parse(res.wrong.text).error.code, 'model_wrong_endpoint');
  });
});
