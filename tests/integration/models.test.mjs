// Model routing (which names are served, which are model_not_found) and the
// GET /v1/models catalogue with its allow_tee / allow_zdr filters.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, standardModels, closedPort, postJson, getJson, chatBody, marker,
  assertError, assertCompletion,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let gw;
let allIds;

before(async () => {
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = standardConfig(mock.url, dead);
  allIds = Object.keys(config.models).sort();
  gw = await startGateway({ config });
});
after(async () => {
  await gw?.stop();
  await mock?.close();
});

const chat = (body) => postJson(gw.baseURL, CHAT, body);

describe('routing by model name', () => {
  test('plain id routes to the model; upstream gets the provider model name', T, async () => {
    const m = marker('route');
    const c = assertCompletion(await chat(chatBody(`hi ${m}`)), { model: 'mock_model', content: 'Hello from mock' });
    assert.equal(c.choices[0].finish_reason, 'stop');
    const seen = mock.requestsContaining(m);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].body.model, 'upstream-model');
    assert.equal(seen[0].method, 'POST');
    assert.equal(seen[0].url, '/v1/chat/completions');
  });

  test('each model goes to its own provider model', T, async () => {
    for (const [id, upstream] of [['tee_model', 'tee-upstream'], ['both_model', 'both-upstream'], ['plain_model', 'plain-upstream']]) {
      const m = marker(id);
      assertCompletion(await chat(chatBody(`hi ${m}`, {}, id)), { model: id, content: 'Hello from mock' });
      const seen = mock.requestsContaining(m);
      assert.equal(seen.length, 1, id);
      assert.equal(seen[0].body.model, upstream, id);
    }
  });

  test('tollgate::model_name::<id> forces the model; response model is the string sent', T, async () => {
    const m = marker('forced');
    const model = 'tollgate::model_name::mock_model';
    assertCompletion(await chat(chatBody(`hi ${m}`, {}, model)), { model, content: 'Hello from mock' });
    assert.equal(mock.requestsContaining(m)[0]?.body.model, 'upstream-model');
  });

  const notFound = [
    'nope',
    'gpt-4o',
    'openai/gpt-4o',
    'mock_model/extra',
    'Mock_Model',
    'mock-model',
    ' mock_model',
    'tollgate::model_name::nope',
    'tollgate::model_name::',
    'tollgate::function_name::nope',
    'tollgate::function_name::mock_model',
  ];
  for (const model of notFound) {
    test(`model ${JSON.stringify(model)} -> 404 model_not_found`, T, async () => {
      const m = marker('nf');
      const r = await chat(chatBody(`hi ${m}`, {}, model));
      assertError(r, { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
      assert.equal(mock.requestsContaining(m).length, 0, 'must not reach the upstream');
    });
  }

  test('empty model string -> 400 or 404, never forwarded', T, async () => {
    const m = marker('empty');
    const r = await chat(chatBody(`hi ${m}`, {}, ''));
    assert.ok(r.status === 400 || r.status === 404, `got ${r.status} ${r.text}`);
    assertError(r, { type: 'invalid_request_error', param: 'model' });
    assert.equal(mock.requestsContaining(m).length, 0);
  });
});

describe('GET /v1/models', () => {
  const ids = (r) => r.json.data.map((d) => d.id).sort();
  const list = (query = '') => getJson(gw.baseURL, `/v1/models${query}`);

  test('lists every configured model with the documented fields', T, async () => {
    const r = await list();
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(r.json.object, 'list');
    assert.ok(Array.isArray(r.json.data));
    assert.deepEqual(ids(r), allIds);
    for (const m of r.json.data) {
      const ctx = JSON.stringify(m);
      assert.equal(typeof m.id, 'string', ctx);
      assert.match(m.id, /^[a-z0-9]+(_[a-z0-9]+)*$/, ctx);
      assert.equal(m.object, 'model', ctx);
      assert.ok(Number.isInteger(m.created), ctx);
      assert.equal(typeof m.owned_by, 'string', ctx);
      assert.equal(typeof m.is_active, 'boolean', ctx);
      assert.equal(typeof m.input_cost_per_token, 'number', ctx);
      assert.equal(typeof m.output_cost_per_token, 'number', ctx);
      assert.ok(Number.isInteger(m.max_input_tokens), ctx);
      assert.ok(Number.isInteger(m.max_output_tokens), ctx);
      assert.ok(Array.isArray(m.input_modalities) && m.input_modalities.every((x) => typeof x === 'string'), ctx);
      assert.ok(Array.isArray(m.output_modalities) && m.output_modalities.every((x) => typeof x === 'string'), ctx);
      assert.equal(typeof m.display_name, 'string', ctx);
      assert.ok(m.model_info && typeof m.model_info === 'object' && !Array.isArray(m.model_info), ctx);
    }
  });

  test('configured values are reported as configured (mock_model)', T, async () => {
    const r = await list();
    const m = r.json.data.find((d) => d.id === 'mock_model');
    const cfg = standardModels('x', 'y').mock_model;
    assert.ok(m, 'mock_model missing');
    assert.equal(m.display_name, cfg.display_name);
    assert.equal(m.owned_by, cfg.owned_by);
    assert.equal(m.created, cfg.created);
    assert.equal(m.is_active, true);
    assert.equal(m.input_cost_per_token, cfg.input_cost_per_token);
    assert.equal(m.output_cost_per_token, cfg.output_cost_per_token);
    // Written as the exact decimals configured, not as a float's shortest form (1e-6).
    assert.match(r.text, /"id":"mock_model"[^}]*"input_cost_per_token":0\.000001,"output_cost_per_token":0\.000002,/);
    assert.equal(m.max_input_tokens, cfg.max_input_tokens);
    assert.equal(m.max_output_tokens, cfg.max_output_tokens);
    assert.deepEqual(m.input_modalities, ['text']);
    assert.deepEqual(m.output_modalities, ['text']);
    const tee = r.json.data.find((d) => d.id === 'tee_model');
    assert.equal(tee.display_name, 'TEE only');
  });

  test('does not leak provider details (api_base, api_key, upstream model names)', T, async () => {
    const r = await list();
    assert.ok(!r.text.includes(mock.url), 'api_base leaked');
    assert.ok(!r.text.includes('env::'), 'api_key reference leaked');
    assert.ok(!r.text.includes('upstream-model'), 'provider model leaked');
  });

  test('allow_tee=false drops tee-tagged models', T, async () => {
    const r = await list('?allow_tee=false');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ids(r), allIds.filter((id) => id !== 'tee_model' && id !== 'both_model'));
  });

  test('allow_zdr=false drops zdr-tagged models', T, async () => {
    const r = await list('?allow_zdr=false');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ids(r), allIds.filter((id) => id !== 'mock_model' && id !== 'both_model'));
  });

  test('both false drops both kinds; untagged models stay', T, async () => {
    const r = await list('?allow_tee=false&allow_zdr=false');
    assert.equal(r.status, 200, r.text);
    const got = ids(r);
    assert.deepEqual(got, allIds.filter((id) => !['mock_model', 'tee_model', 'both_model'].includes(id)));
    assert.ok(got.includes('echo') && got.includes('plain_model'));
  });

  for (const [q, excluded] of [
    ['?allow_tee=TRUE', []],
    ['?allow_tee=True&allow_zdr=true', []],
    ['?allow_zdr=False', ['mock_model', 'both_model']],
    ['?allow_tee=FALSE', ['tee_model', 'both_model']],
    ['?allow_tee=fAlSe&allow_zdr=TrUe', ['tee_model', 'both_model']],
  ]) {
    test(`case-insensitive ${q} -> 200`, T, async () => {
      const r = await list(q);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(ids(r), allIds.filter((id) => !excluded.includes(id)));
    });
  }

  for (const [q, param] of [
    ['?allow_tee=yes', 'allow_tee'],
    ['?allow_tee=1', 'allow_tee'],
    ['?allow_tee=', 'allow_tee'],
    ['?allow_zdr=no', 'allow_zdr'],
    ['?allow_zdr=falsey', 'allow_zdr'],
    ['?allow_tee=true&allow_zdr=0', 'allow_zdr'],
  ]) {
    test(`bad value ${q} -> 400 (param ${param})`, T, async () => {
      const r = await list(q);
      assertError(r, { status: 400, type: 'invalid_request_error', param });
    });
  }

  test('unrelated query parameters are ignored', T, async () => {
    const r = await list('?foo=bar');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ids(r), allIds);
  });
});
