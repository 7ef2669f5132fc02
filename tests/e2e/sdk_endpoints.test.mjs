// End-to-end: embeddings and transcriptions through the official OpenAI Node SDK, and rerank
// through Cohere's `cohere-ai` SDK, against the gateway's built-in models (the dummy provider),
// pointed at it by base URL and key only. The SDKs decode what they get: embeddings asked for
// as base64 (the OpenAI SDK's default) must come out as the same floats as asked for as float.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { CohereClient } from 'cohere-ai';
import { GATEWAY_DEFAULTS, startGateway, runTollgate } from '../fixtures/gateway.mjs';

const T = { timeout: 20_000 };
const dummy = (endpoint, extra = {}) => ({
  endpoint, routing: ['local'], ...extra, providers: { local: { type: 'dummy' } },
});
const CONFIG = {
  gateway: { ...GATEWAY_DEFAULTS, auth: 'required' },
  models: {
    echo: dummy('chat'),
    embed_small: dummy('embedding', { input_cost_per_token: 0.000001 }),
    rank_small: dummy('rerank', { input_cost_per_token: 0.000001 }),
    whisper_local: dummy('transcription', { cost_per_audio_second: 0.0001 }),
  },
};

let gw;
let key;
const openai = () => new OpenAI({ baseURL: `${gw.baseURL}/v1`, apiKey: key, maxRetries: 0, timeout: 8000 });
const admin = async (...args) => {
  const r = await runTollgate(['admin', '--config', gw.configPath, ...args], { env: { XDG_DATA_HOME: gw.dataHome } });
  assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** A WAV file of `seconds` of 16 kHz mono 16-bit silence. */
function wav(seconds) {
  const data = Buffer.alloc(16000 * 2 * seconds);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20);
  head.writeUInt16LE(1, 22);
  head.writeUInt32LE(16000, 24);
  head.writeUInt32LE(32000, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

before(async () => {
  gw = await startGateway({ config: CONFIG });
  await admin('teams', 'create', 'sdk', '--balance', '10');
  key = (await admin('keys', 'create', '--team', 'sdk', '--name', 'endpoints')).trim();
});
after(async () => {
  await gw?.stop();
});

describe('embeddings via the OpenAI SDK', () => {
  test('the default (base64) and float decode to the same vectors, with dimensions', T, async () => {
    const input = ['the quick brown fox', 'jumps over the lazy dog'];
    const model = 'tollgate::embedding_model_name::embed_small';
    const b64 = await openai().embeddings.create({ model, input, dimensions: 32 });
    const floats = await openai().embeddings.create({ model, input, dimensions: 32, encoding_format: 'float' });
    assert.equal(b64.data.length, 2);
    for (let i = 0; i < 2; i++) {
      assert.equal(b64.data[i].index, i);
      assert.equal(b64.data[i].embedding.length, 32);
      assert.deepEqual(Array.from(b64.data[i].embedding), floats.data[i].embedding);
    }
    assert.ok(floats.data[0].embedding.some((x) => x !== 0), 'a vector derived from the text');
    assert.equal(floats.model, model);
    assert.equal(floats.usage.prompt_tokens, 9);
    assert.equal(floats.usage['tollgate::cost'], 0.000009);
  });

  test('a bare model name still works (deprecated)', T, async () => {
    const { data, response } = await openai().embeddings.create({ model: 'embed_small', input: 'hello' }).withResponse();
    assert.equal(data.data.length, 1);
    assert.match(response.headers.get('deprecation'), /^@\d+$/);
  });
});

describe('transcriptions via the OpenAI SDK', () => {
  const formats = [
    ['json', (r) => assert.match(r.text, /^Audio of 2\.00 seconds: WAV, 16000 Hz, 1 channel, 16-bit/)],
    ['verbose_json', (r) => {
      assert.equal(r.duration, 2);
      assert.equal(r.language, 'de');
      assert.equal(r.segments.length, 1);
    }],
    ['text', (r) => assert.match(r, /^Audio of 2\.00 seconds/)],
    ['srt', (r) => assert.match(r, /^1\n00:00:00,000 --> 00:00:02,000\nAudio of 2\.00 seconds/)],
    ['vtt', (r) => assert.match(r, /^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.000\n/)],
  ];
  for (const [format, check] of formats) {
    test(`response_format ${format}`, T, async () => {
      const r = await openai().audio.transcriptions.create({
        file: await toFile(wav(2), 'speech.wav', { type: 'audio/wav' }),
        model: 'whisper_local',
        response_format: format,
        language: 'de',
        temperature: 0.2,
      });
      check(r);
    });
  }

  test('a bad language is a BadRequestError naming the parameter', T, async () => {
    const err = await openai().audio.transcriptions.create({
      file: await toFile(wav(1), 'speech.wav'), model: 'whisper_local', language: 'english',
    }).catch((e) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.param, 'language');
  });
});

describe('rerank via the cohere-ai SDK', () => {
  test('results by relevance, cut to topN, with the documents asked for', T, async () => {
    const cohere = new CohereClient({ token: key, environment: gw.baseURL });
    const r = await cohere.rerank({
      model: 'rank_small',
      query: 'red apple',
      documents: ['green apple', 'red car', 'red apple pie', 'blue sky'],
      topN: 3,
      returnDocuments: true,
    });
    assert.deepEqual(r.results.map((x) => x.index), [2, 0, 1]);
    assert.equal(r.results[0].relevanceScore, 1);
    assert.equal(r.results[0].document.text, 'red apple pie');
    assert.equal(r.meta.billedUnits.searchUnits, 1);
  });

  test('a wrong model is the SDK\'s NotFoundError', T, async () => {
    const cohere = new CohereClient({ token: key, environment: gw.baseURL });
    const err = await cohere.rerank({ model: 'no_such_model', query: 'q', documents: ['d'] }).catch((e) => e);
    assert.equal(err.statusCode, 404);
    assert.equal(err.body.error.code, 'model_not_found');
  });
});
