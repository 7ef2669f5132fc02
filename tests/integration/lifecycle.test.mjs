// Process lifecycle: graceful shutdown on SIGTERM, `tollgate check-config`,
// and `serve` refusing a bad config.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, slowPieces } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, toToml, writeTempFile, runTollgate, readSSE,
  chatBody, sleep, rawConnect, GATEWAY_DEFAULTS,
} from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const CHAT = '/v1/chat/completions';
let mock;
let dead;

before(async () => {
  mock = await startMock();
  dead = `http://127.0.0.1:${await closedPort()}/v1`;
});
after(async () => {
  await mock?.close();
});

function startStream(gw, content) {
  return fetch(gw.baseURL + CHAT, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(content, { stream: true })),
  });
}

/**
 * Tries GET /health on a brand-new connection (not a pooled one).
 * Resolves {ok, status} or {ok: false, error} when the connection is refused/closed.
 */
async function probe(port) {
  let c;
  try {
    c = await rawConnect(port);
  } catch (error) {
    return { ok: false, error: error.code ?? String(error) };
  }
  try {
    await c.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const r = await c.read(1000);
    return r ? { ok: r.status === 200, status: r.status } : { ok: false, error: 'no response' };
  } finally {
    c.close();
  }
}

describe('graceful shutdown', () => {
  test('SIGTERM while idle -> exits 0 promptly', T, async () => {
    const gw = await startGateway({ config: standardConfig(mock.url, dead) });
    try {
      const t0 = Date.now();
      const { code, signal } = await gw.stop('SIGTERM');
      assert.equal(signal, null, `killed by ${signal}`);
      assert.equal(code, 0);
      assert.ok(Date.now() - t0 < 3000, `idle shutdown took ${Date.now() - t0} ms`);
    } finally {
      await gw.kill();
    }
  });

  test('SIGTERM after a proxied answer (its upstream connection kept for reuse) -> exits 0 promptly', T, async () => {
    // A pooled upstream connection keeps its last call's deadline timer armed (here for a
    // minute); shutdown must not wait for it.
    const config = standardConfig(mock.url, dead, { gateway: { shutdown_timeout_ms: 8000 } });
    Object.assign(config.models.mock_model.providers.primary,
      { first_byte_timeout_ms: 60_000, total_timeout_ms: 60_000 });
    const gw = await startGateway({ config });
    try {
      const res = await fetch(gw.baseURL + CHAT, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify(chatBody('hello')),
      });
      assert.equal(res.status, 200);
      await res.text();
      const t0 = Date.now();
      gw.terminate('SIGTERM');
      const exit = await Promise.race([gw.exited, sleep(3000).then(() => null)]);
      assert.ok(exit, 'process still running 3 s after SIGTERM with nothing in flight');
      assert.equal(exit.signal, null, `killed by ${exit.signal}`);
      assert.equal(exit.code, 0);
      assert.ok(Date.now() - t0 < 3000);
    } finally {
      await gw.kill();
    }
  });

  test('SIGTERM during a stream: the stream completes, new connections are refused, exit 0', T, async () => {
    const gw = await startGateway({ config: standardConfig(mock.url, dead) });
    try {
      const res = await startStream(gw, 'mock:stream-slow=100');
      assert.equal(res.status, 200);
      let signalled = false;
      let exitInfo = null;
      const exitedAt = gw.exited.then((x) => { exitInfo = { ...x, at: Date.now() }; });
      let probeResult = null;
      const ssePromise = readSSE(res, {
        onEvent: (ev) => {
          if (!signalled && ev.json?.choices?.[0]?.delta?.content) {
            signalled = true;
            gw.terminate('SIGTERM');
            // Once the listener is closed, a new request must not be served.
            sleep(300).then(() => probe(gw.port)).then((p) => { probeResult = p; });
          }
          return false;
        },
      });
      const sse = await ssePromise;
      const streamEnd = Date.now();
      assert.ok(signalled, 'never got a content chunk to signal on');
      assert.equal(sse.done, true, 'in-flight stream did not finish with [DONE]');
      assert.equal(sse.error, undefined, `stream ended with error ${JSON.stringify(sse.error)}`);
      assert.equal(sse.content, slowPieces().join(''), 'stream content truncated');
      await Promise.race([exitedAt, sleep(4000)]);
      assert.ok(exitInfo, 'process did not exit within 4 s of the stream ending');
      assert.equal(exitInfo.signal, null);
      assert.equal(exitInfo.code, 0);
      assert.ok(exitInfo.at >= streamEnd - 50, 'process exited before the stream finished');
      await sleep(50);
      assert.ok(probeResult, 'probe did not run');
      assert.ok(!probeResult.ok || probeResult.status !== 200,
        `a new request was served 200 after SIGTERM (${JSON.stringify(probeResult)})`);
    } finally {
      await gw.kill();
    }
  });

  test('in-flight work longer than shutdown_timeout_ms is cut off; process exits in bounded time', T, async () => {
    const gw = await startGateway({ config: standardConfig(mock.url, dead, { gateway: { shutdown_timeout_ms: 500 } }) });
    try {
      const res = await startStream(gw, 'mock:stream-slow=200'); // ~4 s of streaming
      assert.equal(res.status, 200);
      const t0 = Date.now();
      gw.terminate('SIGTERM');
      const reading = readSSE(res).catch((e) => ({ thrown: e }));
      const exit = await Promise.race([gw.exited, sleep(3500).then(() => null)]);
      assert.ok(exit, 'process still running 3.5 s after SIGTERM with shutdown_timeout_ms = 500');
      assert.ok(Date.now() - t0 >= 400, `exited after ${Date.now() - t0} ms, before the shutdown timeout`);
      const sse = await reading;
      assert.ok(sse.thrown || sse.done === false, 'a 4 s stream cannot have completed within 500 ms');
    } finally {
      await gw.kill();
    }
  });
});

describe('tollgate check-config', () => {
  const good = () => standardConfig('http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1');

  async function check(text, name = 'tollgate.toml') {
    const file = writeTempFile(name, text);
    const r = await runTollgate(['check-config', file]);
    return { ...r, file };
  }

  /** Asserts a `FILE: KEY: reason` diagnostic on stderr whose KEY mentions `keyPart`. */
  function assertDiagnostic(r, keyPart) {
    assert.equal(r.code, 1, `exit code ${r.code}; stdout ${r.stdout}; stderr ${r.stderr}`);
    assert.ok(!/^ok\s*$/m.test(r.stdout), 'printed ok for a bad file');
    const line = r.stderr.split('\n').find((l) => l.startsWith(`${r.file}: `));
    assert.ok(line, `no line starting with "${r.file}: " on stderr:\n${r.stderr}`);
    const rest = line.slice(r.file.length + 2);
    const sep = rest.indexOf(': ');
    assert.ok(sep > 0, `no "KEY: reason" after the file name: ${line}`);
    const key = rest.slice(0, sep);
    const reason = rest.slice(sep + 2);
    assert.ok(key.includes(keyPart), `KEY ${JSON.stringify(key)} does not name ${keyPart}: ${line}`);
    assert.ok(reason.trim().length > 0, `empty reason: ${line}`);
  }

  test('a good config -> exit 0, prints ok', T, async () => {
    const r = await check(toToml(good()));
    assert.equal(r.code, 0, `stderr: ${r.stderr}`);
    assert.equal(r.stdout.trim(), 'ok');
  });

  test('minimal models (only the echo model, model defaults) -> ok', T, async () => {
    const r = await check(toToml({
      gateway: { ...GATEWAY_DEFAULTS },
      models: { echo: { routing: ['local'], providers: { local: { type: 'dummy' } } } },
    }));
    assert.equal(r.code, 0, `stderr: ${r.stderr}`);
    assert.equal(r.stdout.trim(), 'ok');
  });

  test('unknown key in [gateway] -> exit 1 naming it', T, async () => {
    const cfg = good();
    cfg.gateway.bogus_setting = 5;
    assertDiagnostic(await check(toToml(cfg)), 'bogus_setting');
  });

  test('unknown key in a model -> exit 1 naming it', T, async () => {
    const cfg = good();
    cfg.models.mock_model.colour = 'red';
    assertDiagnostic(await check(toToml(cfg)), 'colour');
  });

  test('unknown key in a provider -> exit 1 naming it', T, async () => {
    const cfg = good();
    cfg.models.mock_model.providers.primary.api_bsae = 'http://x/v1';
    assertDiagnostic(await check(toToml(cfg)), 'api_bsae');
  });

  test('unknown top-level table -> exit 1 naming it', T, async () => {
    const cfg = good();
    cfg.extras = { a: 1 };
    assertDiagnostic(await check(toToml(cfg)), 'extras');
  });

  for (const badId of ['Bad_Model', 'bad-model', 'bad__model', '_bad', 'bad_']) {
    test(`bad model id ${JSON.stringify(badId)} -> exit 1 naming it`, T, async () => {
      const cfg = good();
      cfg.models[badId] = { routing: ['local'], providers: { local: { type: 'dummy' } } };
      assertDiagnostic(await check(toToml(cfg)), badId);
    });
  }

  test('good model ids with digits and underscores -> ok', T, async () => {
    const cfg = good();
    cfg.models.model_2 = { routing: ['local'], providers: { local: { type: 'dummy' } } };
    cfg.models['4o_mini_x'] = { routing: ['local'], providers: { local: { type: 'dummy' } } };
    const r = await check(toToml(cfg));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ok');
  });

  test('provider without type -> exit 1 naming "type"', T, async () => {
    const cfg = good();
    delete cfg.models.mock_model.providers.primary.type;
    assertDiagnostic(await check(toToml(cfg)), 'type');
  });

  test('provider with an unknown type -> exit 1 naming "type"', T, async () => {
    const cfg = good();
    cfg.models.mock_model.providers.primary.type = 'carrier_pigeon';
    assertDiagnostic(await check(toToml(cfg)), 'type');
  });

  test('routing names a provider that is not defined -> exit 1 naming routing', T, async () => {
    const cfg = good();
    cfg.models.mock_model.routing = ['primary', 'ghost'];
    assertDiagnostic(await check(toToml(cfg)), 'routing');
  });

  test('wrong value type (workers = "two") -> exit 1 naming workers', T, async () => {
    const cfg = good();
    cfg.gateway.workers = 'two';
    assertDiagnostic(await check(toToml(cfg)), 'workers');
  });

  test('TOML syntax error -> exit 1 with the file name on stderr', T, async () => {
    const r = await check('[gateway\nlisten = "127.0.0.1:0"\n');
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(r.file), r.stderr);
  });

  test('missing file -> non-zero exit with the file name on stderr', T, async () => {
    const file = writeTempFile('placeholder.toml', '') + '.missing';
    const r = await runTollgate(['check-config', file]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(file), r.stderr);
  });
});

describe('serve with a bad config', () => {
  test('refuses to start: non-zero exit, no listening line, diagnostic on stderr', T, async () => {
    const cfg = standardConfig(mock.url, dead);
    cfg.gateway.not_a_real_key = true;
    const file = writeTempFile('bad.toml', toToml(cfg));
    const r = await runTollgate(['serve', '--config', file], { timeoutMs: 5000 });
    assert.notEqual(r.code, 0);
    assert.ok(!r.stdout.includes('listening'), r.stdout);
    assert.ok(r.stderr.includes('not_a_real_key'), r.stderr);
  });

  test('unknown sub-command -> non-zero exit', T, async () => {
    const r = await runTollgate(['definitely-not-a-command'], { timeoutMs: 5000 });
    assert.notEqual(r.code, 0);
  });
});
