// The name lookup of an upstream host is bounded by the provider's connect_timeout_ms. The
// gateway runs in a private mount namespace whose /etc/resolv.conf names a DNS server of the
// test's own, on a loopback address, that never answers. Needs root (to bind port 53 and mount);
// skipped otherwise. A lookup still hanging at shutdown must not delay the exit. An upstream given
// by its address is looked up by no one: it answers while every lookup the gateway allows hangs.
// A burst of new connections to a host by name, past the lookups allowed at once, waits for them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import dgram from 'node:dgram';
import {
  TOLLGATE_BIN, toToml, writeTempFile, postJson, chatBody, assertError, openaiProvider,
} from '../fixtures/gateway.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';

const DNS_ADDRESS = '127.0.0.77';

function canIsolate() {
  if (process.getuid?.() !== 0) return 'needs root';
  const probe = spawnSync('unshare', ['-m', 'true']);
  return probe.status === 0 ? null : 'unshare -m is not available';
}

/** A DNS server that receives every query and answers none. */
async function silentDns() {
  const socket = dgram.createSocket('udp4');
  let queries = 0;
  socket.on('message', () => { queries++; });
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, DNS_ADDRESS, resolve);
  });
  return { get queries() { return queries; }, close: () => new Promise((r) => socket.close(r)) };
}

/** A DNS server that answers every A query with 127.0.0.1 (and AAAA with none), `delayMs` late. */
async function slowDns(delayMs) {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, from) => {
    let end = 12;
    while (end < query.length && query[end] !== 0) end += query[end] + 1;
    end += 5;  // the root label, QTYPE, QCLASS
    if (end > query.length) return;
    const isA = query.readUInt16BE(end - 4) === 1;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180, 2);  // a response, recursion desired and available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(isA ? 1 : 0, 6);
    const answer = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
    const reply = Buffer.concat([header, query.subarray(12, end), isA ? answer : Buffer.alloc(0)]);
    setTimeout(() => socket.send(reply, from.port, from.address), delayMs);
  });
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, DNS_ADDRESS, resolve);
  });
  return { close: () => new Promise((r) => socket.close(r)) };
}

/** Starts the gateway with /etc/resolv.conf replaced, inside its own mount namespace only. */
async function startIsolated(configFile, resolvFile) {
  const proc = spawn('unshare', ['-m', 'sh', '-c',
    'mount --bind "$1" /etc/resolv.conf && exec "$2" serve --config "$3"',
    'sh', resolvFile, TOLLGATE_BIN, configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // A data directory of its own: never the home directory's store, which another build may own.
    env: { ...process.env, XDG_DATA_HOME: path.dirname(configFile) },
  });
  let stdout = '';
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 10_000);
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = stdout.match(/tollgate listening on 127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`gateway exited ${code}: ${stderr}`)); });
  });
  return {
    baseURL: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => { proc.once('exit', resolve); proc.kill('SIGTERM'); }),
  };
}

test('a name lookup that never answers ends at connect_timeout_ms with 504 upstream_timeout',
  { timeout: 15_000, skip: canIsolate() ?? false }, async () => {
    const dns = await silentDns();
    const resolv = writeTempFile('resolv.conf', `nameserver ${DNS_ADDRESS}\noptions timeout:5 attempts:2\n`);
    const config = writeTempFile('tollgate.toml', toToml({
      gateway: { listen: '127.0.0.1:0', auth: 'open', workers: 1 },
      models: {
        mock_model: {
          routing: ['p'],
          providers: {
            p: {
              type: 'openai', api_base: 'http://upstream.tollgate-test:8000/v1', model: 'x',
              connect_timeout_ms: 500, first_byte_timeout_ms: 1000, total_timeout_ms: 2000,
            },
          },
        },
      },
    }));
    const gw = await startIsolated(config, resolv);
    try {
      const t0 = Date.now();
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'));
      const took = Date.now() - t0;
      assertError(r, { status: 504, type: 'api_error', code: 'upstream_timeout' });
      assert.match(r.json.error.message, /resolving/);
      assert.ok(took < 2000, `took ${took} ms with connect_timeout_ms = 500`);
      assert.ok(dns.queries > 0, 'the lookup never reached the test DNS server');
    } finally {
      const t1 = Date.now();
      await gw.stop();
      await dns.close();
      // A lookup still hanging must not hold up the exit either.
      assert.ok(Date.now() - t1 < 3000, `exit took ${Date.now() - t1} ms`);
    }
  });

test('an upstream given by its address answers while the 64 lookups the gateway allows hang',
  { timeout: 20_000, skip: canIsolate() ?? false }, async () => {
    const dns = await silentDns();
    const mock = await startMock();
    const resolv = writeTempFile('resolv.conf', `nameserver ${DNS_ADDRESS}\noptions timeout:5 attempts:2\n`);
    const hanging = {
      type: 'openai', api_base: 'http://upstream.tollgate-test:8000/v1', model: 'x',
      connect_timeout_ms: 2000, first_byte_timeout_ms: 3000, total_timeout_ms: 4000,
    };
    const config = writeTempFile('tollgate.toml', toToml({
      gateway: { listen: '127.0.0.1:0', auth: 'open', workers: 1 },
      models: {
        mock_model: { routing: ['p'], providers: { p: hanging } },
        direct: { routing: ['m'], providers: { m: openaiProvider(mock.url) } },
      },
    }));
    const gw = await startIsolated(config, resolv);
    try {
      // 64 requests each open a connection of their own to a host whose lookup never ends.
      const stuck = Array.from({ length: 64 },
        () => postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi')));
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(dns.queries > 0, 'the lookups never reached the test DNS server');
      const r = await postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi', {}, 'direct'));
      assert.equal(r.status, 200, r.text);
      for (const s of await Promise.all(stuck)) {
        assertError(s, { status: 504, type: 'api_error', code: 'upstream_timeout' });
      }
    } finally {
      await gw.stop();
      await mock.close();
      await dns.close();
    }
  });

test('100 requests at once to an upstream by name all answer: past 64 lookups, an attempt waits',
  { timeout: 20_000, skip: canIsolate() ?? false }, async () => {
    const dns = await slowDns(300);
    const mock = await startMock();
    const resolv = writeTempFile('resolv.conf', `nameserver ${DNS_ADDRESS}\noptions timeout:5 attempts:2\n`);
    const port = new URL(mock.url).port;
    const config = writeTempFile('tollgate.toml', toToml({
      gateway: { listen: '127.0.0.1:0', auth: 'open', workers: 1 },
      models: {
        mock_model: {
          routing: ['p'],
          providers: { p: openaiProvider(`http://upstream.tollgate-test:${port}/v1`) },
        },
      },
    }));
    const gw = await startIsolated(config, resolv);
    try {
      // Every request needs a connection of its own: none is free while the lookups take 300 ms.
      const all = await Promise.all(Array.from({ length: 100 },
        () => postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'))));
      const failed = all.filter((r) => r.status !== 200);
      assert.equal(failed.length, 0, failed.map((r) => r.text).slice(0, 3).join('\n'));
    } finally {
      await gw.stop();
      await mock.close();
      await dns.close();
    }
  });
