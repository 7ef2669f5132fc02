// POST /v1/audio/transcriptions: the multipart body the upstream gets (provider's model, the
// fields in order, the file last and byte-identical, a 3 MB one included), every response format,
// every validation and multipart error, the size limits (413 by Content-Length, for a chunked
// upload, and for a file just over max_upload_bytes), upstream failures and billing by seconds.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { ENGINES } from '../fixtures/engines.mjs';
import {
  startMock, mockTranscript, MOCK_AUDIO_SECONDS, MOCK_VERBOSE_DURATION, UPSTREAM_ERROR_MESSAGES,
} from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, openaiProvider, closedPort, adminOf, endpointModel, assertError, rawConnect,
  assertStillServing, marker, UPSTREAM_KEY,
} from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };
const TX = '/v1/audio/transcriptions';
const AUDIO_PRICE = 0.0001; // USD per second
const SMALL_UPLOAD = 200_000;
const FORM_ALLOWANCE = 1024 * 1024;

let store;
let mock;
let gw; // max_upload_bytes 4,000,000: room for the 3 MB file
let small; // max_upload_bytes 200,000: the size limits
let smallConfig;
let key;

const bearer = (k) => ({ authorization: `Bearer ${k}` });
const { ok, keyFor, spend } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
/** A USD amount as the spend log prints it (exact decimal, at most 12 places). */
const usd = (x) => Number(x.toFixed(12));
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');

// ---------------------------------------------------------------------------
// Multipart bodies, written by hand so that every byte is the test's choice.

/**
 * `parts`: [name, value] for a field, or {name = 'file', data, filename, contentType, head} for a
 * file (`head` replaces the whole header block). Returns {body, contentType, boundary}.
 */
function multipart(parts, { boundary = `----tollgate-test-${crypto.randomBytes(6).toString('hex')}`, close = true } = {}) {
  const chunks = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (Array.isArray(p)) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${p[0]}"\r\n\r\n`));
      chunks.push(Buffer.isBuffer(p[1]) ? p[1] : Buffer.from(String(p[1])));
    } else {
      if (p.head !== undefined) {
        chunks.push(Buffer.from(`${p.head}\r\n\r\n`));
      } else {
        let disposition = `Content-Disposition: form-data; name="${p.name ?? 'file'}"`;
        if (p.filename !== null) disposition += `; filename="${p.filename ?? 'audio.bin'}"`;
        chunks.push(Buffer.from(`${disposition}\r\n`));
        if (p.contentType !== null) chunks.push(Buffer.from(`Content-Type: ${p.contentType ?? 'application/octet-stream'}\r\n`));
        chunks.push(Buffer.from('\r\n'));
      }
      chunks.push(p.data);
    }
    chunks.push(Buffer.from('\r\n'));
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

/** A PCM WAV file of `seconds` (8 kHz, mono, 16-bit: 16,000 bytes a second). */
function wav(seconds, { rate = 8000, channels = 1, bits = 16 } = {}) {
  const dataBytes = Math.round(seconds * rate * channels * bits / 8);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'latin1');
  h.write('fmt ', 12, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * channels * bits / 8, 28);
  h.writeUInt16LE(channels * bits / 8, 32);
  h.writeUInt16LE(bits, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  const samples = Buffer.alloc(dataBytes);
  for (let i = 0; i < dataBytes; i++) samples[i] = (i * 37) & 0xff;
  return Buffer.concat([h, samples]);
}

/** Bytes that are not a WAV file (an "mp3"). */
const notWav = (n, seed = 1) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  b.write('ID3', 0, 'latin1');
  return b;
};

/** POSTs a multipart body to `to` on a connection of its own (closed after). */
function uploadAlone(to, form, k = key) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: to.port, method: 'POST', path: TX, agent: false,
      headers: { 'content-type': form.contentType, 'content-length': form.body.length, connection: 'close', ...bearer(k) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: { get: (h) => res.headers[h.toLowerCase()] ?? null }, text, json });
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(form.body);
  });
}

async function toResult(res) {
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

/** POSTs a multipart body (from multipart(), or raw {body, contentType}). */
async function upload(form, { k = key, to = gw, headers = {} } = {}) {
  const res = await fetch(to.baseURL + TX, {
    method: 'POST',
    headers: { 'content-type': form.contentType, ...bearer(k), ...headers },
    body: form.body,
  });
  return toResult(res);
}

/** The standard small form: model tx and a short file, plus `extra` fields (with a marker prompt). */
const FILE = notWav(4000);
const basic = (extra = [], file = { data: FILE }) => [['model', 'tx'], ...extra, file];

/** Uploads `parts` (a marker prompt added) and returns the response and the one upstream copy. */
async function forwarded(parts, opts = {}) {
  const m = marker('tx');
  const withMarker = parts.some((p) => Array.isArray(p) && p[0] === 'prompt') ? parts
    : [...parts.slice(0, 1), ['prompt', `context ${m}`], ...parts.slice(1)];
  const { r, up } = await mock.forwardedOnce('/audio/transcriptions', () => upload(multipart(withMarker), opts));
  return { r, up, parts: withMarker };
}

before(async () => {
  store = await ENGINES[0].start();
  mock = await startMock();
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const txModel = (upstream, extra = {}, provider = {}) => endpointModel('transcription', mock.url, upstream, extra, provider);
  const models = {
    tx: txModel('whisper-upstream'),
    tx_quick: txModel('whisper-upstream', {}, { first_byte_timeout_ms: 500, total_timeout_ms: 5000 }),
    tx_dead: { endpoint: 'transcription', routing: ['dead'], providers: { dead: openaiProvider(dead, { connect_timeout_ms: 1000 }) } },
    tx_priced: txModel('whisper-priced', { cost_per_audio_second: AUDIO_PRICE }),
    emb: { endpoint: 'embedding', routing: ['primary'], providers: { primary: openaiProvider(mock.url, { model: 'emb-upstream' }) } },
  };
  const config = standardConfig(mock.url, dead, { gateway: { auth: 'required', max_upload_bytes: 4_000_000 }, models });
  config.storage = store.storage;
  gw = await startGateway({ config, env: store.env });
  smallConfig = standardConfig(mock.url, dead, { gateway: { auth: 'required', max_upload_bytes: SMALL_UPLOAD }, models });
  smallConfig.storage = store.storage;
  small = await startGateway({ config: smallConfig, env: store.env });
  key = await keyFor('tx-main', '100');
});

after(async () => {
  await small?.stop();
  await gw?.stop();
  await mock?.close();
  store?.stop();
});

// ---------------------------------------------------------------------------

describe('transcriptions: forwarding', () => {
  test('the upstream gets model (replaced), the forwarded fields in order, then the file, byte for byte', T, async () => {
    const file = wav(0.5);
    const fields = [
      ['language', 'en'],
      ['prompt', `Names: Zoë, O'Brien ${marker('txf')}`],
      ['response_format', 'json'],
      ['temperature', '0.2'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
      ['include[]', 'logprobs'],
      ['chunking_strategy', 'auto'],
      ['known_speaker_names[]', 'alice'],
      ['known_speaker_names[]', 'bob'],
      ['known_speaker_references[]', 'data:audio/wav;base64,UklGRg=='],
    ];
    const parts = [
      ['model', 'tx'], ...fields, ['stream', 'false'], ['tollgate::tags', '{"feature":"notes"}'],
      ['tollgate::dryrun', 'false'], { data: file, filename: 'clip.wav', contentType: 'audio/wav' },
    ];
    const { r, up } = await forwarded(parts);
    assert.equal(r.status, 200, r.text);
    assert.equal(up.method, 'POST');
    assert.equal(up.url, '/v1/audio/transcriptions');
    // 128 bits from the kernel's random source, new for each request: a client that could
    // work the boundary out (from the ids it is shown, say) could end a field with it and add
    // parts of its own.
    const boundaryOf = (u) => /^multipart\/form-data; *boundary=(.*)$/.exec(u.headers['content-type'] ?? '')?.[1];
    assert.match(boundaryOf(up) ?? '', /^tollgate-[0-9a-f]{32}$/);
    assert.notEqual(boundaryOf((await forwarded(parts)).up), boundaryOf(up));
    assert.equal(up.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.ok(up.form, `the mock could not parse the upstream body: ${up.formError}`);
    assert.deepEqual(up.form.fields, [['model', 'whisper-upstream'], ...fields]);
    assert.deepEqual(up.form.partNames, ['model', ...fields.map(([n]) => n), 'file'], 'the file comes last');
    assert.equal(up.form.files, 1);
    assert.deepEqual(up.form.file, { name: 'file', filename: 'clip.wav', contentType: 'audio/wav', size: file.length, sha256: sha256(file) });
    // The JSON answer, passed through.
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(r.text, up.answer);
    assert.deepEqual(r.json, { text: mockTranscript(up.form.file), usage: { type: 'duration', seconds: MOCK_AUDIO_SECONDS } });
  });

  test('a file sent before the fields still goes last; no filename or content type gets defaults', T, async () => {
    const file = notWav(1000, 3);
    const { r, up } = await forwarded([{ data: file, filename: null, contentType: null }, ['model', 'tx'], ['language', 'de'], ['prompt', `p ${marker('first')}`]]);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(up.form.partNames, ['model', 'language', 'prompt', 'file']);
    assert.equal(up.form.file.sha256, sha256(file));
    assert.equal(typeof up.form.file.filename, 'string', 'the upstream gets some filename');
    assert.ok(up.form.file.contentType, 'the upstream gets some content type');
  });

  test('a 3 MB file arrives byte-identical (sha256), near-boundaries and all', T, async () => {
    const boundary = `----tollgate-test-${crypto.randomBytes(6).toString('hex')}`;
    const file = crypto.randomBytes(3_000_000);
    // Sequences a careless parser could take for delimiters: the client's boundary one byte
    // short, the gateway's own boundary prefix, bare CRLFs and dashes.
    const traps = [`\r\n--${boundary.slice(0, -1)}`, '\r\n--tollgate-', '\r\n\r\n', '--\r\n', `--${boundary}`.slice(0, 20)];
    traps.forEach((t, i) => {
      const at = 1000 + i * 600_000;
      Buffer.from(t, 'latin1').copy(file, at);
      // A random byte after the boundary one byte short would be its last character one run in
      // 256, and the trap the real delimiter: a space completes none of them.
      file[at + t.length] = 0x20;
    });
    file.write('\r\n--', file.length - 4, 'latin1');
    const m = marker('big');
    const before = mock.requests.length;
    const r = await upload(multipart([['model', 'tx'], ['prompt', m], { data: file, filename: 'big.flac', contentType: 'audio/flac' }], { boundary }));
    assert.equal(r.status, 200, r.text);
    const up = mock.requests.slice(before).find((q) => q.url.endsWith('/audio/transcriptions'));
    assert.ok(up?.form, `no parsed upstream request (${up?.formError})`);
    assert.equal(up.form.file.size, file.length);
    assert.equal(up.form.file.sha256, sha256(file));
    assert.equal(up.form.file.filename, 'big.flac');
    assert.equal(up.form.file.contentType, 'audio/flac');
  });

  test('a FormData body built by fetch (as the SDKs send it) is accepted and forwarded', T, async () => {
    const file = notWav(70_000, 5);
    const fd = new FormData();
    fd.append('model', 'tx');
    fd.append('response_format', 'text');
    fd.append('prompt', marker('fd'));
    fd.append('file', new Blob([file], { type: 'audio/mp4' }), 'voice memo.m4a');
    const before = mock.requests.length;
    const r = await toResult(await fetch(gw.baseURL + TX, { method: 'POST', headers: bearer(key), body: fd }));
    assert.equal(r.status, 200, r.text);
    const up = mock.requests.slice(before).find((q) => q.url.endsWith('/audio/transcriptions'));
    assert.equal(up.form.file.sha256, sha256(file));
    assert.equal(up.form.file.filename, 'voice memo.m4a');
    assert.equal(up.form.file.contentType, 'audio/mp4');
    assert.equal(r.text, `${mockTranscript(up.form.file)}\n`);
  });

  test('each response_format comes back in its own format and content type, body passed through', T, async () => {
    const formats = {
      json: /^application\/json/,
      verbose_json: /^application\/json/,
      text: /^text\/plain; charset=utf-8$/,
      srt: /^text\/plain; charset=utf-8$/,
      vtt: /^text\/plain; charset=utf-8$/,
    };
    for (const [format, type] of Object.entries(formats)) {
      const { r, up } = await forwarded(basic([['response_format', format]]));
      assert.equal(r.status, 200, `${format}: ${r.text}`);
      assert.match(r.headers.get('content-type') ?? '', type, `${format}: content type ${r.headers.get('content-type')}`);
      assert.equal(r.text, up.answer, `${format}: body`);
      const text = mockTranscript(up.form.file);
      if (format === 'json') assert.deepEqual(r.json, { text, usage: { type: 'duration', seconds: MOCK_AUDIO_SECONDS } });
      if (format === 'verbose_json') {
        assert.equal(r.json.duration, MOCK_VERBOSE_DURATION);
        assert.equal(r.json.text, text);
        assert.equal(r.json.segments.length, 1);
      }
      if (format === 'text') assert.equal(r.text, `${text}\n`);
      if (format === 'srt') assert.match(r.text, /^1\n00:00:00,000 --> 00:00:08,500\n/);
      if (format === 'vtt') assert.match(r.text, /^WEBVTT\n\n00:00:00\.000 --> 00:00:08\.500\n/);
    }
  });

  test('edge values that are valid: temperature 0 and 1, a 64 KiB prompt, stream false', T, async () => {
    for (const extra of [[['temperature', '0']], [['temperature', '1']], [['temperature', '0.55']], [['prompt', 'p'.repeat(64 * 1024)]], [['stream', 'false']], [['language', 'zu']]]) {
      const r = await upload(multipart(basic(extra)));
      assert.equal(r.status, 200, `${extra[0][0]}=${extra[0][1].slice(0, 20)}: ${r.text.slice(0, 300)}`);
    }
  });
});

describe('transcriptions: validation', () => {
  const FILE_PART = { data: FILE };
  const cases = [
    ['language upper case', basic([['language', 'EN']]), 'invalid_value', 'language'],
    ['language a name', basic([['language', 'english']]), 'invalid_value', 'language'],
    ['language 3 letters', basic([['language', 'eng']]), 'invalid_value', 'language'],
    ['language not a code', basic([['language', 'xx']]), 'invalid_value', 'language'],
    ['language empty', basic([['language', '']]), 'invalid_value', 'language'],
    ['response_format unknown', basic([['response_format', 'xml']]), 'invalid_value', 'response_format'],
    ['response_format upper case', basic([['response_format', 'JSON']]), 'invalid_value', 'response_format'],
    ['temperature a word', basic([['temperature', 'hot']]), 'invalid_type', 'temperature'],
    ['temperature empty', basic([['temperature', '']]), 'invalid_type', 'temperature'],
    ['temperature with a unit', basic([['temperature', '0.5C']]), 'invalid_type', 'temperature'],
    ['temperature nan', basic([['temperature', 'nan']]), 'invalid_type', 'temperature'],
    ['temperature above 1', basic([['temperature', '1.5']]), 'invalid_value', 'temperature'],
    ['temperature below 0', basic([['temperature', '-0.1']]), 'invalid_value', 'temperature'],
    ['stream true', basic([['stream', 'true']]), 'invalid_value', 'stream'],
    ['stream not a boolean', basic([['stream', 'yes']]), 'invalid_type', 'stream'],
    ['dryrun not a boolean', basic([['tollgate::dryrun', 'yes']]), 'invalid_type', 'tollgate::dryrun'],
    ['tags not JSON', basic([['tollgate::tags', 'feature=notes']]), 'invalid_tags', 'tollgate::tags'],
    ['tags not strings', basic([['tollgate::tags', '{"a":1}']]), 'invalid_tags', 'tollgate::tags.a'],
    ['tags an array', basic([['tollgate::tags', '["a"]']]), 'invalid_tags', 'tollgate::tags'],
    ['an unknown field', basic([['speaker', 'x']]), 'unknown_parameter', 'speaker'],
    ['an unknown tollgate field', basic([['tollgate::episode_id', 'x']]), 'unknown_parameter', 'tollgate::episode_id'],
    ['no file', [['model', 'tx']], 'missing_required_parameter', 'file'],
    ['an empty file', basic([], { data: Buffer.alloc(0) }), 'invalid_value', 'file'],
    ['two file parts', [['model', 'tx'], FILE_PART, FILE_PART], 'invalid_value', 'file'],
    ['no model', [FILE_PART], 'missing_required_parameter', 'model'],
    ['model empty', [['model', ''], FILE_PART], 'invalid_value', 'model'],
    ['model twice', [['model', 'tx'], ['model', 'tx'], FILE_PART], 'invalid_value', 'model'],
    ['language twice', basic([['language', 'en'], ['language', 'de']]), 'invalid_value', 'language'],
    ['a field over 64 KiB', basic([['prompt', 'p'.repeat(64 * 1024 + 1)]]), 'invalid_value', 'prompt'],
    ['a field that is not UTF-8', basic([['prompt', Buffer.from([0x61, 0xff, 0xfe])]]), 'invalid_value', 'prompt'],
  ];
  for (const [name, parts, code, param] of cases) {
    test(`${name} -> 400 ${code} (param ${JSON.stringify(param)})`, T, async () => {
      const before = mock.requests.length;
      const r = await upload(multipart(parts));
      assertError(r, { status: 400, type: 'invalid_request_error', code, param });
      assert.equal(mock.requests.length, before, 'nothing goes upstream');
    });
  }

  const good = multipart(basic());
  const malformed = [
    ['no boundary in the Content-Type', { body: good.body, contentType: 'multipart/form-data' }],
    ['an empty boundary', { body: good.body, contentType: 'multipart/form-data; boundary=""' }],
    ['a boundary of 71 characters', (() => { const f = multipart(basic(), { boundary: 'b'.repeat(71) }); return f; })()],
    ['a boundary with a forbidden character', { body: good.body, contentType: 'multipart/form-data; boundary=ab@cd' }],
    ['a boundary ending in a space', { body: good.body, contentType: 'multipart/form-data; boundary="abc "' }],
    ['two boundary parameters', { body: good.body, contentType: `${good.contentType}; boundary=other` }],
    ['a boundary the body does not use', { body: good.body, contentType: 'multipart/form-data; boundary=not-the-one' }],
    ['a body without its closing delimiter', multipart(basic(), { close: false })],
    ['a body cut inside the file', { body: good.body.subarray(0, good.body.length - 1000), contentType: good.contentType }],
    ['an empty body', { body: Buffer.alloc(0), contentType: good.contentType }],
    ['a part without a name', multipart([['model', 'tx'], { head: 'Content-Disposition: form-data; filename="a.wav"', data: FILE }])],
    ['a part without Content-Disposition', multipart([['model', 'tx'], { head: 'Content-Type: audio/wav', data: FILE }])],
    ['a part header block over 8 KiB', multipart([['model', 'tx'], { head: `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nX-Padding: ${'x'.repeat(9000)}`, data: FILE }])],
    ['more than 64 parts', multipart(basic(Array.from({ length: 70 }, () => ['include[]', 'logprobs'])))],
  ];
  for (const [name, form] of malformed) {
    test(`${name} -> 400 invalid_multipart`, T, async () => {
      const before = mock.requests.length;
      const r = await upload(form);
      assertError(r, { status: 400, type: 'invalid_request_error', code: 'invalid_multipart', param: '' });
      assert.equal(mock.requests.length, before, 'nothing goes upstream');
    });
  }

  test('a Content-Type that is not multipart -> 415 unsupported_media_type', T, async () => {
    for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const r = await upload({ body: Buffer.from('{"model":"tx"}'), contentType });
      assertError(r, { status: 415, code: 'unsupported_media_type' });
    }
  });

  test('a model configured for another endpoint -> 400 model_wrong_endpoint; an unknown one -> 404', T, async () => {
    for (const model of ['mock_model', 'emb']) {
      assertError(await upload(multipart([['model', model], { data: FILE }])), { status: 400, code: 'model_wrong_endpoint', param: 'model' });
    }
    assertError(await upload(multipart([['model', 'whisper-1'], { data: FILE }])), { status: 404, code: 'model_not_found' });
  });

  test('no API key -> 401', T, async () => {
    const form = multipart(basic());
    const r = await toResult(await fetch(gw.baseURL + TX, { method: 'POST', headers: { 'content-type': form.contentType }, body: form.body }));
    assertError(r, { status: 401, code: 'missing_api_key' });
  });
});

// ---------------------------------------------------------------------------

/** Streams a multipart upload with Transfer-Encoding: chunked (no Content-Length) until the
 * gateway answers or `total` file bytes are sent. Resolves {status, json, text, sent}. */
function chunkedUpload(port, total) {
  const boundary = 'chunked-upload-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ntx\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const piece = Buffer.alloc(64 * 1024, 0x5a);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const timer = setTimeout(() => { req.destroy(); reject(new Error(`no answer after ${sent} bytes`)); }, 10_000);
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: TX,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked', ...bearer(key) },
    }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        clearTimeout(timer);
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: { get: (k) => res.headers[k.toLowerCase()] ?? null }, text, json, sent });
      });
      res.on('error', () => {});
    });
    req.on('error', (err) => { if (!answered) { clearTimeout(timer); reject(new Error(`${err.code ?? err.message} after ${sent} bytes, before any answer`)); } });
    req.write(head);
    const pump = () => {
      while (!answered && !req.destroyed && sent < total) {
        sent += piece.length;
        if (!req.write(piece)) { req.once('drain', pump); return; }
      }
      if (!answered && !req.destroyed && sent >= total) req.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
}

describe('transcriptions: size limits (max_upload_bytes 200,000)', () => {
  const routeLimit = SMALL_UPLOAD + FORM_ALLOWANCE;

  test('a Content-Length over max_upload_bytes + 1 MiB -> 413 payload_too_large before the body is sent', T, async () => {
    const c = await rawConnect(small.port);
    try {
      await c.write(`POST ${TX} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=abc\r\nContent-Length: ${routeLimit + 1}\r\n\r\n`);
      const r = await c.read(5000);
      assert.ok(r, 'no answer without the body');
      assertError(r, { status: 413, type: 'invalid_request_error', code: 'payload_too_large' });
      assert.ok(await c.waitClosed(3000), 'the connection is closed');
    } finally {
      c.close();
    }
  });

  test('a chunked upload that passes max_upload_bytes + 1 MiB -> 413 payload_too_large, before the end', T, async () => {
    // 50 MB offered: the answer must come once the limit is passed (plus what the socket
    // buffers hold), not after the whole body.
    const total = 50 * 1024 * 1024;
    const r = await chunkedUpload(small.port, total);
    assertError(r, { status: 413, code: 'payload_too_large' });
    assert.ok(r.sent < total, `the gateway answered only after all ${r.sent} bytes`);
  });

  test('a chunked upload within the limits is accepted', T, async () => {
    const r = await chunkedUpload(small.port, 128 * 1024);
    assert.equal(r.status, 200, r.text);
  });

  test('a file of exactly max_upload_bytes -> 200; max_upload_bytes + 1 -> 413 payload_too_large (param file)', T, async () => {
    const exact = notWav(SMALL_UPLOAD, 9);
    const r = await uploadAlone(small, multipart(basic([['prompt', marker('exact')]], { data: exact })));
    assert.equal(r.status, 200, r.text);
    assert.equal(mock.requests.at(-1).form.file.sha256, sha256(exact));
    const before = mock.requests.length;
    const over = await uploadAlone(small, multipart(basic([], { data: notWav(SMALL_UPLOAD + 1) })));
    assertError(over, { status: 413, type: 'invalid_request_error', code: 'payload_too_large', param: 'file' });
    assert.equal(mock.requests.length, before, 'nothing goes upstream');
    // Nothing more is sent to `small` after this: see the next test.
  });

  test('after a 413 for the file, the gateway goes on serving uploads',
    T, async () => {
      // A gateway of its own, whose first upload is the 413.
      const fresh = await startGateway({ config: smallConfig, env: store.env });
      try {
        const over = await uploadAlone(fresh, multipart(basic([], { data: notWav(SMALL_UPLOAD + 1) })));
        assertError(over, { status: 413, code: 'payload_too_large', param: 'file' });
        const far = await uploadAlone(fresh, multipart(basic([], { data: notWav(SMALL_UPLOAD + 500_000) })));
        assertError(far, { status: 413, code: 'payload_too_large', param: 'file' });
        const file = notWav(1000, 4);
        const r = await uploadAlone(fresh, multipart(basic([['prompt', marker('after413')]], { data: file })));
        assert.equal(r.status, 200, r.text);
        assert.equal(mock.requests.at(-1).form.file.sha256, sha256(file));
        await assertStillServing(fresh);
      } finally {
        await fresh.kill();
      }
    });
});

describe('transcriptions: upstream failures', () => {
  const cases = [
    ['mock:status=500', 'tx', 'json', 502, 'upstream_error'],
    ['mock:status=503', 'tx', 'text', 502, 'upstream_error'],
    ['mock:status=429', 'tx', 'json', 429, 'upstream_rate_limited'],
    ['mock:status=400', 'tx', 'json', 400, 'upstream_invalid_request'],
    ['mock:cut', 'tx', 'json', 502, 'upstream_error'],
    ['mock:slow=2000', 'tx_quick', 'json', 504, 'upstream_timeout'],
    ['plain', 'tx_dead', 'json', 502, 'upstream_unavailable'],
  ];
  for (const [directive, model, format, status, code] of cases) {
    test(`${model} with "${directive}" (${format}) -> ${status} ${code}`, T, async () => {
      const t0 = Date.now();
      const r = await upload(multipart([['model', model], ['prompt', directive], ['response_format', format], { data: FILE }]));
      const e = assertError(r, { status, code });
      if (code === 'upstream_invalid_request') assert.equal(e.message, UPSTREAM_ERROR_MESSAGES[400]);
      if (code === 'upstream_timeout') assert.ok(Date.now() - t0 < 1900, `took ${Date.now() - t0} ms`);
    });
  }

  test('a json answer that is not JSON -> 502 upstream_error',
    T, async () => {
    const r = await upload(multipart([['model', 'tx'], ['prompt', 'mock:garbage'], ['response_format', 'json'], { data: FILE }]));
    assertError(r, { status: 502, code: 'upstream_error' });
  });
});

describe('transcriptions: billing (cost_per_audio_second)', () => {
  const priced = (format, file, extra = []) => multipart([['model', 'tx_priced'], ['response_format', format], ...extra, { data: file }]);
  // A file that is not plain PCM WAV is held at the model's max_audio_seconds (default 3600).
  const FILE24K = notWav(24_000, 2);
  const MAX_SECONDS = 3600;

  const cases = [
    ['json: the upstream usage seconds', 'json', FILE24K, MOCK_AUDIO_SECONDS, false],
    ['verbose_json: the duration', 'verbose_json', FILE24K, MOCK_VERBOSE_DURATION, false],
    ['text, a WAV file: the header duration', 'text', wav(2.5), 2.5, true],
    ['srt, a WAV file: the header duration', 'srt', wav(1.25), 1.25, true],
    ['text, not WAV: the hold, max_audio_seconds', 'text', FILE24K, MAX_SECONDS, true],
    ['vtt, not WAV: the hold, max_audio_seconds', 'vtt', notWav(40_000), MAX_SECONDS, true],
  ];
  for (const [name, format, file, seconds, estimated] of cases) {
    test(`${name} -> ${seconds} s x ${AUDIO_PRICE} USD, endpoint transcription`, T, async () => {
      const team = `tx-${format}-${seconds}`.replace(/\./g, '_');
      const k = await keyFor(team, '1');
      const r = await upload(priced(format, file, [['tollgate::tags', '{"feature":"notes"}']]), { k });
      assert.equal(r.status, 200, r.text);
      const rows = await spend(team);
      assert.equal(rows.length, 1);
      const row = rows[0];
      assert.equal(row.endpoint, 'transcription');
      assert.equal(row.model, 'tx_priced');
      assert.equal(row.status, 200);
      assert.equal(row.cost, usd(seconds * AUDIO_PRICE));
      if (estimated) assert.equal(row.estimated, true);
      assert.deepEqual(row.tags, { feature: 'notes' });
      assert.equal(row.request_id, r.headers.get('x-request-id'));
    });
  }

  test('seconds the upstream reported (json usage, verbose_json duration) are not flagged estimated',
    T, async () => {
      const k = await keyFor('tx-exact', '1');
      for (const format of ['json', 'verbose_json']) {
        const r = await upload(priced(format, FILE24K), { k });
        assert.equal(r.status, 200, r.text);
      }
      const rows = await spend('tx-exact');
      assert.equal(rows.length, 2);
      for (const row of rows) assert.equal(row.estimated, false, JSON.stringify(row));
    });

  test('tollgate::dryrun "true": answered, no spend row', T, async () => {
    const k = await keyFor('tx-dry', '1');
    const r = await upload(priced('json', FILE24K, [['tollgate::dryrun', 'true']]), { k });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await spend('tx-dry'), []);
  });

  /** The one spend row of `team` after uploading `file` (its answer a 200). */
  const billedRow = async (team, format, file, prompt) => {
    const k = await keyFor(team, '1');
    const r = await upload(priced(format, file, prompt ? [['prompt', prompt]] : []), { k });
    assert.equal(r.status, 200, r.text);
    const rows = await spend(team);
    assert.equal(rows.length, 1);
    return rows[0];
  };

  test('compressed audio in a WAV header is held at max_audio_seconds and charged what the upstream reports', T, async () => {
    const mp3InWav = wav(0.5);
    mp3InWav.writeUInt16LE(0x55, 20); // MP3 inside: its bytes hold far more than 0.5 s
    const row = await billedRow('tx-mp3wav', 'json', mp3InWav, 'mock:seconds=60');
    assert.equal(row.cost, usd(60 * AUDIO_PRICE));
    assert.equal(row.estimated, false);
  });

  test('a WAV header claiming 2 bytes of data is held, and estimated, for all the file holds', T, async () => {
    const file = wav(2.5);
    file.writeUInt32LE(2, 40);
    const row = await billedRow('tx-short-claim', 'text', file);
    assert.equal(row.cost, usd(2.5 * AUDIO_PRICE));
    assert.equal(row.estimated, true);
  });

  test('an upstream reporting more seconds than the hold bounds: the hold is charged, flagged', T, async () => {
    const row = await billedRow('tx-over', 'json', wav(1), 'mock:seconds=60');
    assert.equal(row.cost, usd(1 * AUDIO_PRICE));
    assert.equal(row.estimated, true);
  });

  test('token counts past what the upload could hold are clamped to it, flagged; the aggregates stay whole', T, async () => {
    const k = await keyFor('tx-huge', '1');
    const file = notWav(3000, 3);
    for (let i = 0; i < 2; i++) {
      const r = await upload(priced('json', file, [['prompt', 'mock:huge-token-usage']]), { k });
      assert.equal(r.status, 200, r.text);
    }
    const rows = await spend('tx-huge');
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.ok(row.prompt_tokens > 0 && row.prompt_tokens < 1_000_000, JSON.stringify(row));
      assert.ok(row.completion_tokens > 0 && row.completion_tokens < 1_000_000, JSON.stringify(row));
      assert.equal(row.estimated, true);
    }
    const summary = JSON.parse((await ok('spend', 'summary', '--team', 'tx-huge', '--by', 'day', '--json')).stdout);
    assert.equal(summary.length, 1);
    assert.equal(summary[0].requests, 2);
    assert.equal(summary[0].prompt_tokens, rows[0].prompt_tokens + rows[1].prompt_tokens);
  });

  test('a balance below the file\'s bound -> 403 insufficient_balance, nothing sent upstream', T, async () => {
    const k = await keyFor('tx-poor', '0.0001'); // one second; the file is bounded at 3600
    const before = mock.requests.length;
    const r = await upload(priced('json', FILE24K), { k });
    assertError(r, { status: 403, code: 'insufficient_balance' });
    assert.equal(mock.requests.length, before);
  });
});
