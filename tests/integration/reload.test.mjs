// Configuration reload on SIGHUP: /ready names the configuration serving (the first 16 hex
// digits of its file's SHA-256); a file check-config refuses is refused with the same message
// and the running configuration stays; a good one serves new requests within a second while
// 100 streams in flight finish whole on the configuration they started with; a change that
// needs a restart is said and kept as it was.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { startMock, slowPieces } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, postJson, getJson, chatBody, openaiProvider, toToml,
  runTollgate, waitFor,
} from '../fixtures/gateway.mjs';

const hashOf = (text) => crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);

/** Streams one chat completion over its own connection; resolves to the whole SSE text. */
function stream(baseURL, body, started) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseURL}/v1/chat/completions`, {
      method: 'POST', agent: false, headers: { 'content-type': 'application/json' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.once('data', started);
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('reload on SIGHUP', () => {
  let mock;
  let gw;
  let config;

  before(async () => {
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    config = standardConfig(mock.url, dead, { gateway: { auth: 'open' } });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  const readyHash = async () => (await getJson(gw.baseURL, '/ready')).json.config;

  test('/ready names the configuration serving', async () => {
    assert.equal(await readyHash(), hashOf(fs.readFileSync(gw.configPath)));
  });

  test('a file check-config refuses is refused with its message, and the configuration stays', async () => {
    const before = await readyHash();
    const good = fs.readFileSync(gw.configPath, 'utf8');
    fs.writeFileSync(gw.configPath, good + '\n[models.mock_model.providers.primary.extra]\nx = 1\n');
    try {
      const check = await runTollgate(['check-config', gw.configPath]);
      assert.equal(check.code, 1);
      const message = check.stderr.trim();
      assert.ok(message.length > 0);
      const seen = gw.stderr.length;
      process.kill(gw.pid, 'SIGHUP');
      await waitFor(() => gw.stderr.slice(seen).includes('reload refused'), 2000);
      assert.ok(gw.stderr.slice(seen).includes(message), gw.stderr.slice(seen));
      assert.equal(await readyHash(), before);
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'));
      assert.equal(r.status, 200, r.text);
    } finally {
      fs.writeFileSync(gw.configPath, good);
    }
  });

  test('a good file serves within a second; 100 streams in flight finish whole', { timeout: 60_000 }, async () => {
    let started = 0;
    // 20 pieces, 40 ms apart: each stream is still running when the reload lands.
    const body = chatBody('mock:stream-slow=40', { stream: true });
    const streams = Array.from({ length: 100 }, () => stream(gw.baseURL, body, () => { started += 1; }));
    await waitFor(() => started === 100, 10_000);

    const next = structuredClone(config);
    next.models.added = { routing: ['p'], providers: { p: openaiProvider(mock.url) } };
    next.gateway.listen = '127.0.0.1:1';  // Needs a restart: kept as it was.
    const text = toToml(next);
    fs.writeFileSync(gw.configPath, text);
    const seen = gw.stderr.length;
    const sent = Date.now();
    process.kill(gw.pid, 'SIGHUP');
    await waitFor(async () => {
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'added'));
      return r.status === 200;
    }, 1000, 20);
    assert.ok(Date.now() - sent <= 1000);
    assert.equal(await readyHash(), hashOf(text));
    const log = gw.stderr.slice(seen);
    assert.match(log, /reloaded configuration [0-9a-f]{16}/);
    assert.match(log, /gateway\.listen changed and needs a restart/);

    const done = await Promise.all(streams);
    const whole = slowPieces().join('');
    for (const s of done) {
      assert.equal(s.status, 200);
      assert.ok(s.text.trimEnd().endsWith('data: [DONE]'), s.text.slice(-200));
      const content = s.text.split('\n\n').filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '').join('');
      assert.equal(content, whole);
    }
  });
});
