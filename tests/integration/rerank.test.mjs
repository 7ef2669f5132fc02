// POST /v1/rerank: what the upstream sees, results sorted by score and cut to top_n, documents
// returned from the request, meta (search units, tokens from either usage shape), the empty
// answer for no documents, every validation error, upstream failures and billing.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock, mockRerankScore, mockRerankTokens } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, openaiProvider, closedPort, adminOf, endpointModel, postJson, marker,
  assertError, UPSTREAM_KEY,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const RERANK = '/v1/rerank';
const IN_PRICE = 0.000001;

let store;
let mock;
let gw;
let key;

const bearer = (k) => ({ authorization: `Bearer ${k}` });
const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));

const rerank = (body, { k = key } = {}) => postJson(gw.baseURL, RERANK, body, { headers: bearer(k) });
const textOf = (d) => (typeof d === 'string' ? d : d.text);

before(async () => {
  store = await ENGINES[0].start();
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const rrModel = (upstream, extra = {}, provider = {}) => endpointModel('rerank', mock.url, upstream, extra, provider);
  const config = standardConfig(mock.url, dead, {
    gateway: { auth: 'required' },
    models: {
      rr: rrModel('rr-upstream'),
      rr_score: rrModel('rr-upstream mock:score-field'),
      rr_cohere: rrModel('rr-upstream mock:cohere-meta'),
      rr_quick: rrModel('rr-upstream', {}, { first_byte_timeout_ms: 500, total_timeout_ms: 5000 }),
      rr_dead: { endpoint: 'rerank', routing: ['dead'], providers: { dead: openaiProvider(dead, { connect_timeout_ms: 1000 }) } },
      rr_priced: rrModel('rr-priced-upstream', { input_cost_per_token: IN_PRICE }),
      emb: { endpoint: 'embedding', routing: ['primary'], providers: { primary: openaiProvider(mock.url, { model: 'emb-upstream' }) } },
    },
  });
  config.storage = store.storage;
  gw = await startGateway({ config, env: store.env });
  key = await keyFor('rr-main', '100');
});

after(async () => {
  await gw?.stop();
  await mock?.close();
  store?.stop();
});

/** Sends `body` with a marker in its query and returns the response and the one upstream copy. */
async function forwarded(body, opts) {
  const b = structuredClone(body);
  b.query = `${b.query} ${marker('rr')}`;
  const { r, up } = await mock.forwardedOnce('/rerank', () => rerank(b, opts));
  return { r, up, sent: b };
}

/** The results the gateway should answer for `sent`, from the mock's scores. */
function expectedResults(sent) {
  let all = sent.documents.map((d, index) => ({ index, relevance_score: mockRerankScore(sent.query, textOf(d)) }));
  all = all.sort((a, b) => b.relevance_score - a.relevance_score);
  if (sent.top_n) all = all.slice(0, sent.top_n);
  if (sent.return_documents) all = all.map((x) => ({ ...x, document: { text: textOf(sent.documents[x.index]) } }));
  return all;
}

function assertRerank(r, sent, { tokens = mockRerankTokens(sent.query, sent.documents) } = {}) {
  const ctx = `response was ${r.status} ${r.text.slice(0, 400)}`;
  assert.equal(r.status, 200, ctx);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const j = r.json;
  assert.equal(typeof j.id, 'string', ctx);
  assert.ok(j.id.length > 0, ctx);
  assert.deepEqual(j.results, expectedResults(sent), ctx);
  assert.deepEqual(j.meta.api_version, { version: '2' }, ctx);
  assert.deepEqual(j.meta.billed_units, { search_units: Math.ceil(sent.documents.length / 100) }, ctx);
  assert.deepEqual(j.meta.tokens, { input_tokens: tokens }, ctx);
  return j;
}

const DOCS = [
  'Carson City is the capital city of the American state of Nevada.',
  { text: 'The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean.' },
  'Washington, D.C. is the capital of the United States.',
  'Capital punishment has existed in the United States since before it was a country.',
  { text: 'Charlotte Amalie is the capital and largest city of the United States Virgin Islands.' },
  'North Dakota is a state in the United States; Bismarck is its capital.',
];

describe('rerank: forwarding and answer', () => {
  test('the upstream gets exactly model (replaced), query, documents as sent, top_n and return_documents false', T, async () => {
    const { r, up, sent } = await forwarded({
      model: 'rr', query: 'What is the capital of the United States?', documents: DOCS, top_n: 3,
      return_documents: true, 'tollgate::tags': { feature: 'search' }, 'tollgate::dryrun': false,
      'tollgate::cache_options': { enabled: 'off' }, unknown_field: 1,
    });
    assert.equal(up.method, 'POST');
    assert.equal(up.url, '/v1/rerank');
    assert.match(up.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(up.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.deepEqual(up.body, { model: 'rr-upstream', query: sent.query, documents: DOCS, top_n: 3, return_documents: false });
    assertRerank(r, sent);
  });

  test('without top_n or return_documents: every result, sorted, without documents', T, async () => {
    const { r, up, sent } = await forwarded({ model: 'rr', query: 'capital', documents: DOCS });
    assert.deepEqual(up.body, { model: 'rr-upstream', query: sent.query, documents: DOCS, return_documents: false });
    const upstream = JSON.parse(up.answer).results.map((x) => x.relevance_score);
    assert.notDeepEqual(upstream, [...upstream].sort((a, b) => b - a), 'the mock answered unsorted');
    const j = assertRerank(r, sent);
    assert.equal(j.results.length, DOCS.length);
    for (const x of j.results) assert.ok(!('document' in x));
  });

  test('return_documents false: no document members', T, async () => {
    const { r, sent } = await forwarded({ model: 'rr', query: 'capital', documents: DOCS, top_n: 2, return_documents: false });
    const j = assertRerank(r, sent);
    assert.equal(j.results.length, 2);
  });

  test('top_n larger than the documents: all of them', T, async () => {
    const { r, sent } = await forwarded({ model: 'rr', query: 'capital', documents: DOCS.slice(0, 2), top_n: 50, return_documents: true });
    assert.equal(assertRerank(r, sent).results.length, 2);
  });

  test('an upstream that says score instead of relevance_score', T, async () => {
    const { r, up, sent } = await forwarded({ model: 'rr_score', query: 'capital', documents: DOCS, top_n: 4 });
    assert.ok('score' in JSON.parse(up.answer).results[0]);
    assertRerank(r, sent);
  });

  test('tokens from meta.billed_units.input_tokens (Cohere)', T, async () => {
    const { r, up, sent } = await forwarded({ model: 'rr_cohere', query: 'capital', documents: DOCS });
    assert.ok(!('usage' in JSON.parse(up.answer)));
    assertRerank(r, sent);
  });

  test('search units: ceil(documents / 100)', T, async () => {
    for (const n of [1, 100, 101, 250]) {
      const documents = Array.from({ length: n }, (_, i) => `document number ${i}`);
      const { r, sent } = await forwarded({ model: 'rr', query: 'number', documents, top_n: 5 });
      assertRerank(r, sent);
    }
  });

  test('10,000 documents are accepted', T, async () => {
    const documents = Array.from({ length: 10_000 }, (_, i) => `d${i}`);
    const { r, sent } = await forwarded({ model: 'rr', query: 'q', documents, top_n: 3 });
    assertRerank(r, sent);
    assert.equal(r.json.meta.billed_units.search_units, 100);
  });

  test('empty documents: 200 {id, results: [], meta} at once, nothing sent upstream, no spend row', T, async () => {
    const k = await keyFor('rr-empty', '1');
    const before = mock.requests.length;
    const r = await rerank({ model: 'rr_priced', query: 'anything', documents: [], top_n: 3, return_documents: true }, { k });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['id', 'meta', 'results']);
    assert.equal(typeof r.json.id, 'string');
    assert.ok(r.json.id.length > 0);
    assert.deepEqual(r.json.results, []);
    assert.deepEqual(r.json.meta.api_version, { version: '2' });
    assert.deepEqual(r.json.meta.billed_units, { search_units: 0 });
    assert.equal(mock.requests.length, before, 'no upstream call');
    assert.deepEqual(await spend('rr-empty'), []);
  });
});

describe('rerank: validation', () => {
  const D = ['a', 'b'];
  const cases = [
    ['query empty', { model: 'rr', query: '', documents: D }, 'invalid_value', 'query'],
    ['query missing', { model: 'rr', documents: D }, 'missing_required_parameter', 'query'],
    ['query a number', { model: 'rr', query: 5, documents: D }, 'invalid_type', 'query'],
    ['query an array', { model: 'rr', query: ['a'], documents: D }, 'invalid_type', 'query'],
    ['model missing', { query: 'q', documents: D }, 'missing_required_parameter', 'model'],
    ['model empty', { model: '', query: 'q', documents: D }, 'invalid_value', 'model'],
    ['model a number', { model: 1, query: 'q', documents: D }, 'invalid_type', 'model'],
    ['documents missing', { model: 'rr', query: 'q' }, 'missing_required_parameter', 'documents'],
    ['documents a string', { model: 'rr', query: 'q', documents: 'a' }, 'invalid_type', 'documents'],
    ['documents an object', { model: 'rr', query: 'q', documents: { text: 'a' } }, 'invalid_type', 'documents'],
    ['a document that is a number', { model: 'rr', query: 'q', documents: ['a', 5] }, 'invalid_type', 'documents[1]'],
    ['a document that is null', { model: 'rr', query: 'q', documents: [null] }, 'invalid_type', 'documents[0]'],
    ['a document object without text', { model: 'rr', query: 'q', documents: [{ title: 'a' }] }, 'missing_required_parameter', 'documents[0].text'],
    ['a document text that is not a string', { model: 'rr', query: 'q', documents: ['a', { text: 5 }] }, 'invalid_type', 'documents[1].text'],
    ['10,001 documents', { model: 'rr', query: 'q', documents: Array(10_001).fill('a') }, 'invalid_value', 'documents'],
    ['top_n 0', { model: 'rr', query: 'q', documents: D, top_n: 0 }, 'invalid_value', 'top_n'],
    ['top_n negative', { model: 'rr', query: 'q', documents: D, top_n: -1 }, 'invalid_value', 'top_n'],
    ['top_n a string', { model: 'rr', query: 'q', documents: D, top_n: '2' }, 'invalid_type', 'top_n'],
    ['top_n fractional', { model: 'rr', query: 'q', documents: D, top_n: 1.5 }, 'invalid_type', 'top_n'],
    ['return_documents a string', { model: 'rr', query: 'q', documents: D, return_documents: 'yes' }, 'invalid_type', 'return_documents'],
    ['dryrun a number', { model: 'rr', query: 'q', documents: D, 'tollgate::dryrun': 1 }, 'invalid_type', 'tollgate::dryrun'],
    ['tags not an object', { model: 'rr', query: 'q', documents: D, 'tollgate::tags': 'x' }, 'invalid_tags', 'tollgate::tags'],
    ['unknown fields denied', { model: 'rr', query: 'q', documents: D, rank_fields: ['x'], 'tollgate::deny_unknown_fields': true }, 'unknown_parameter', 'rank_fields'],
    ['a body that is not an object', '"rerank"', 'invalid_type', ''],
    ['a body that is not JSON', '{"model": ', 'invalid_json', undefined],
  ];
  for (const [name, body, code, param] of cases) {
    test(`${name} -> 400 ${code}${param === undefined ? '' : ` (param ${JSON.stringify(param)})`}`, T, async () => {
      const before = mock.requests.length;
      const r = await rerank(body);
      assertError(r, { status: 400, type: 'invalid_request_error', code, param });
      assert.equal(mock.requests.length, before, 'nothing goes upstream');
    });
  }

  test('a model configured for another endpoint -> 400 model_wrong_endpoint (param model)', T, async () => {
    for (const model of ['mock_model', 'emb']) {
      assertError(await rerank({ model, query: 'q', documents: ['a'] }), { status: 400, code: 'model_wrong_endpoint', param: 'model' });
    }
    // Also with no documents: the model is checked before the empty answer.
    assertError(await rerank({ model: 'emb', query: 'q', documents: [] }), { status: 400, code: 'model_wrong_endpoint', param: 'model' });
  });

  test('an unknown model -> 404 model_not_found', T, async () => {
    assertError(await rerank({ model: 'nope', query: 'q', documents: ['a'] }), { status: 404, code: 'model_not_found' });
    assertError(await rerank({ model: 'nope', query: 'q', documents: [] }), { status: 404, code: 'model_not_found' });
  });

  test('a Content-Type that is not JSON -> 415', T, async () => {
    const res = await fetch(gw.baseURL + RERANK, { method: 'POST', headers: { 'content-type': 'text/plain', ...bearer(key) }, body: '{}' });
    const text = await res.text();
    assertError({ status: res.status, headers: res.headers, text, json: JSON.parse(text) }, { status: 415, code: 'unsupported_media_type' });
  });
});

describe('rerank: upstream failures', () => {
  const cases = [
    ['mock:status=500', 'rr', 502, 'upstream_error'],
    ['mock:status=503', 'rr', 502, 'upstream_error'],
    ['mock:status=429', 'rr', 429, 'upstream_rate_limited'],
    ['mock:status=422', 'rr', 400, 'upstream_invalid_request'],
    ['mock:garbage', 'rr', 502, 'upstream_error'],
    ['mock:cut', 'rr', 502, 'upstream_error'],
    ['mock:bad-index', 'rr', 502, 'upstream_error'],
    ['mock:slow=2000', 'rr_quick', 504, 'upstream_timeout'],
    ['plain', 'rr_dead', 502, 'upstream_unavailable'],
  ];
  for (const [directive, model, status, code] of cases) {
    test(`${model} with "${directive}" -> ${status} ${code}`, T, async () => {
      const t0 = Date.now();
      const r = await rerank({ model, query: `q ${directive}`, documents: ['a', 'b', 'c'], return_documents: true });
      assertError(r, { status, code });
      if (code === 'upstream_timeout') assert.ok(Date.now() - t0 < 1900, `took ${Date.now() - t0} ms`);
    });
  }
});

describe('rerank: billing', () => {
  test('a priced model: one spend row with endpoint rerank, tokens x input price; dryrun writes none', T, async () => {
    const k = await keyFor('rr-bill', '1');
    const sent = { model: 'rr_priced', query: 'capital of the United States', documents: DOCS, top_n: 2, 'tollgate::tags': { feature: 'rank' } };
    const r = await rerank(sent, { k });
    const j = assertRerank(r, sent);
    const tokens = mockRerankTokens(sent.query, DOCS);
    assert.equal(j.meta['tollgate::cost'], tokens * IN_PRICE);
    const rows = await spend('rr-bill');
    assert.equal(rows.length, 1);
    const row = rows[0];
    assert.equal(row.endpoint, 'rerank');
    assert.equal(row.model, 'rr_priced');
    assert.equal(row.status, 200);
    assert.equal(row.prompt_tokens, tokens);
    assert.equal(row.cost, tokens * IN_PRICE);
    assert.equal(row.estimated, false);
    assert.deepEqual(row.tags, { feature: 'rank' });

    const dry = await rerank({ ...sent, 'tollgate::dryrun': true }, { k });
    assertRerank(dry, sent);
    assert.equal(dry.json.meta['tollgate::cost'], undefined);
    assert.equal((await spend('rr-bill')).length, 1, 'dryrun writes no spend row');
  });

  test('an upstream failure is logged at zero cost', T, async () => {
    const k = await keyFor('rr-fail', '1');
    const r = await rerank({ model: 'rr_priced', query: 'mock:status=503', documents: ['a'] }, { k });
    assertError(r, { status: 502, code: 'upstream_error' });
    const rows = await spend('rr-fail');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].endpoint, 'rerank');
    assert.equal(rows[0].status, 502);
    assert.equal(rows[0].cost, 0);
  });
});


