// HTTPS upstreams: certificates and host names are verified. A certificate the gateway does not
// trust is refused (502 upstream_unavailable); the same server is used once its CA is trusted
// (through OpenSSL's standard SSL_CERT_FILE variable).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startGateway, postJson, chatBody, assertError, assertCompletion, openaiProvider } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
let dir;
let server;
let port;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
  server = https.createServer({
    key: fs.readFileSync(path.join(dir, 'key.pem')),
    cert: fs.readFileSync(path.join(dir, 'cert.pem')),
  }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-tls', object: 'chat.completion', created: 1, model: 'upstream-model',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from mock' } }],
        usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
      }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});
after(async () => {
  server?.closeAllConnections?.();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function config(host) {
  return {
    gateway: { listen: '127.0.0.1:0', auth: 'open', workers: 1 },
    models: {
      mock_model: {
        routing: ['tls'],
        providers: { tls: openaiProvider(`https://${host}:${port}/v1`) },
      },
    },
  };
}

/** Sends one chat request through a gateway that reaches the upstream as `host` and trusts the
 * CA file `caFile` (in the test's directory); returns the response. */
async function chatThrough(host, caFile) {
  const gw = await startGateway({ config: config(host), env: { SSL_CERT_FILE: path.join(dir, caFile) } });
  try {
    return await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'));
  } finally {
    await gw.stop();
  }
}

test('an untrusted certificate is refused', T, async () => {
  const e = assertError(await chatThrough('localhost', 'missing.pem'),
    { status: 502, type: 'api_error', code: 'upstream_unavailable' });
  assert.match(e.message, /certificate/i);
});

test('a trusted certificate for the right host name works', T, async () => {
  assertCompletion(await chatThrough('localhost', 'cert.pem'), { model: 'mock_model', content: 'Hello from mock' });
});

test('a trusted certificate for another host name is refused', T, async () => {
  assertError(await chatThrough('127.0.0.1', 'cert.pem'), { status: 502, type: 'api_error', code: 'upstream_unavailable' });
});
