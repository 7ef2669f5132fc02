// The process under pressure: shutdown with work in flight, running out of descriptors, and the
// access log accounting for every exchange however it ended.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, GATEWAY_DEFAULTS, openaiProvider, chatBody, rawConnect,
  sleep, waitFor, toToml, writeTempFile, TOLLGATE_BIN,
} from '../fixtures/gateway.mjs';
import { startRawUpstream } from '../fixtures/raw_upstream.mjs';

const T = { timeout: 20_000 };
const CHAT = '/v1/chat/completions';

function exitWithin(gw, ms) {
  return Promise.race([gw.proc.exitCode !== null ? Promise.resolve({ code: gw.proc.exitCode }) :
    new Promise((resolve) => gw.proc.once('exit', (code, signal) => resolve({ code, signal }))),
  sleep(ms).then(() => null)]);
}

function chatRequest(body) {
  const text = JSON.stringify(body);
  return `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

describe('shutdown with work in flight', () => {
  test('a slow reader of a large answer at the shutdown deadline: clean exit, no memory error', T, async () => {
    const content = 'a'.repeat(8 * 1024 * 1024);
    const body = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
    const up = await startRawUpstream(({ socket }) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    const gw = await startGateway({
      config: {
        gateway: { ...GATEWAY_DEFAULTS, shutdown_timeout_ms: 300 },
        models: { raw: { routing: ['p'], providers: { p: openaiProvider(up.url) } } },
      },
    });
    const c = await rawConnect(gw.port);
    c.socket.pause(); // Reads nothing: the gateway's write blocks.
    await c.write(chatRequest(chatBody('big', {}, 'raw')));
    await sleep(1000);
    const t0 = Date.now();
    gw.terminate('SIGTERM');
    const exit = await exitWithin(gw, 5000);
    c.close();
    await up.close();
    assert.ok(exit, 'still running 5 s after SIGTERM');
    assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}; stderr:\n${gw.stderr.slice(-2000)}`);
    assert.ok(Date.now() - t0 < 5000);
    assert.ok(!/AddressSanitizer|runtime error|LeakSanitizer/.test(gw.stderr), gw.stderr.slice(-3000));
  });

  test('a stream still running at the deadline ends with a service_unavailable event, no [DONE]', T, async () => {
    const mock = await startMock();
    const gw = await startGateway({ config: standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { shutdown_timeout_ms: 500 } }) });
    try {
      const c = await rawConnect(gw.port);
      await c.write(chatRequest(chatBody('mock:stream-slow=400', { stream: true })));
      await waitFor(() => c.buffered.includes('data: '), 5000);
      gw.terminate('SIGTERM');
      await c.waitClosed(5000);
      const text = c.buffered.toString('utf8');
      c.close();
      assert.match(text, /data: \{"error":\{[^\n]*"code":"service_unavailable"/, text.slice(-600));
      assert.ok(!text.includes('[DONE]'));
      assert.ok(await exitWithin(gw, 5000), 'gateway did not exit');
    } finally {
      await gw.stop();
      await mock.close();
    }
  });
});

function cpuTicks(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function connectIdle(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.once('connect', () => resolve(s));
    setTimeout(() => resolve(s), 1000);
  });
}

describe('running out of file descriptors', () => {
  test('the acceptor backs off instead of spinning, and serves again once descriptors free up', T, async () => {
    const gw = await startGateway({
      config: { gateway: { ...GATEWAY_DEFAULTS }, models: { echo: { routing: ['l'], providers: { l: { type: 'dummy' } } } } },
      wrap: ['prlimit', '--nofile=64:64', '--'],
    });
    const flood = [];
    try {
      const before = await rawConnect(gw.port);
      await before.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await before.read())?.status, 200);
      for (let i = 0; i < 100; i++) flood.push(await connectIdle(gw.port));
      await sleep(300);
      const t0 = cpuTicks(gw.pid);
      await sleep(1000);
      const used = cpuTicks(gw.pid) - t0;
      assert.ok(used < 30, `the gateway used ${used} ticks of CPU in 1 s while out of descriptors`);
      await before.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await before.read())?.status, 200, 'an open connection was not served');
      before.close();
      for (const s of flood) s.destroy();
      flood.length = 0;
      // A new client is served within 2 s of the flood closing.
      await waitFor(async () => {
        try { return (await fetch(`${gw.baseURL}/health`, { signal: AbortSignal.timeout(1000) })).status === 200; } catch { return false; }
      }, 2000, 100);
    } finally {
      for (const s of flood) s.destroy();
      await gw.stop();
    }
  });

  test('the soft descriptor limit is raised to the hard limit at start', T, async () => {
    const gw = await startGateway({
      config: { gateway: { ...GATEWAY_DEFAULTS }, models: { echo: { routing: ['l'], providers: { l: { type: 'dummy' } } } } },
      wrap: ['prlimit', '--nofile=64:4096', '--'],
    });
    try {
      const limits = fs.readFileSync(`/proc/${gw.pid}/limits`, 'utf8');
      assert.match(limits, /Max open files\s+4096\s+4096/);
    } finally {
      await gw.stop();
    }
  });
});

/** The access-log lines, less the readiness polls of the test harness. */
function logLines(gw) {
  return gw.stderr.split('\n').filter((l) => l.startsWith('{"ts_ms"')).map((l) => JSON.parse(l))
    .filter((l) => l.path !== '/ready');
}

describe('one access-log line per exchange, with the status the client saw', () => {
  let mock;
  let gw;
  const start = async () => {
    mock = await startMock();
    gw = await startGateway({ config: standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { header_timeout_ms: 300, max_header_bytes: 2048 } }) });
  };
  const stop = async () => { await gw?.stop(); await mock?.close(); };

  test('requests refused before routing are logged: 400, 431, 413, 408', T, async () => {
    await start();
    try {
      const cases = [
        ['garbage\r\n\r\n', 400],
        [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`, 431],
        [`POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n`, 413],
        ['GET /health HTTP/1.1\r\nHost:', 408],
      ];
      for (const [bytes, status] of cases) {
        const c = await rawConnect(gw.port);
        await c.write(bytes);
        assert.equal((await c.read(3000))?.status, status);
        c.close();
      }
      await waitFor(() => logLines(gw).length >= cases.length, 2000);
      assert.deepEqual(logLines(gw).map((l) => l.status), cases.map(([, s]) => s));
    } finally {
      await stop();
    }
  });

  test('a stream ended by an error event is logged with the error\'s status', T, async () => {
    await start();
    try {
      const res = await fetch(gw.baseURL + CHAT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('mock:stream-error', { stream: true })) });
      assert.match(await res.text(), /"error"/);
      await waitFor(() => logLines(gw).length >= 1, 2000);
      const [line] = logLines(gw);
      assert.equal(line.status, 502);
      assert.equal(line.model, 'mock_model');
    } finally {
      await stop();
    }
  });

  test('an answer the client left before receiving is logged 499 with its model', T, async () => {
    await start();
    try {
      const c = await rawConnect(gw.port);
      await c.write(chatRequest(chatBody('mock:stream-slow=100')));
      await sleep(500);
      c.close();
      await waitFor(() => logLines(gw).length >= 1, 4000);
      const [line] = logLines(gw);
      assert.equal(line.status, 499);
      assert.equal(line.model, 'mock_model');
    } finally {
      await stop();
    }
  });
});

test('the startup line brackets an IPv6 address', { timeout: 10_000, skip: !fs.existsSync('/proc/net/if_inet6') && 'no IPv6' }, async () => {
  const file = writeTempFile('v6.toml', toToml({ gateway: { listen: '[::1]:0', auth: 'open' }, models: { echo: { routing: ['l'], providers: { l: { type: 'dummy' } } } } }));
  const proc = spawn(TOLLGATE_BIN, ['serve', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_DATA_HOME: path.dirname(file) },
  });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  try {
    await waitFor(() => /listening/.test(out), 5000);
    assert.match(out, /^tollgate listening on \[::1\]:\d+$/m);
  } finally {
    proc.kill('SIGTERM');
  }
});
