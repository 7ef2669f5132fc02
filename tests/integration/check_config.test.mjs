// `tollgate check-config FILE` runs exactly the validation `tollgate serve --config FILE` runs:
// a file one refuses the other refuses with the same `FILE: KEY: reason` line (and serve never
// starts listening), and values that used to pass the check and then fail at serve time, or mean
// something else there, are refused by both.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { toToml, writeTempFile, runTollgate, TOLLGATE_BIN } from '../fixtures/gateway.mjs';

const T = { timeout: 10_000 };
const SERVE_TIMEOUT_MS = 8_000;
const LISTENING_RE = /^tollgate listening on (\S+):(\d+)\s*$/m;

/**
 * Runs `tollgate serve --config FILE` until it exits or prints its listening line.
 * Resolves {code, stdout, stderr, proc, listening}: `listening` is the [host, port] match, and then
 * the process is still running and the caller ends it by its pid.
 */
function serve(file) {
  return new Promise((resolve, reject) => {
    const proc = spawn(TOLLGATE_BIN, ['serve', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_DATA_HOME: path.dirname(file) },
  });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
      reject(new Error(`serve neither exited nor listened within ${SERVE_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, SERVE_TIMEOUT_MS);
    proc.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
      const m = stdout.match(LISTENING_RE);
      if (m) {
        clearTimeout(timer);
        resolve({ code: null, stdout, stderr, proc, listening: [m[1], Number(m[2])] });
      }
    });
    proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    proc.once('error', (err) => { clearTimeout(timer); reject(err); });
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, proc, listening: null });
    });
  });
}

/** Sends SIGTERM to `proc` by its pid and waits for it to exit (SIGKILL after a bound). */
async function stopByPid(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  try { process.kill(proc.pid, 'SIGTERM'); } catch { return; }
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, 5_000, 'late'); });
  if ((await Promise.race([exited, late])) === 'late') {
    try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
    await exited;
  }
  clearTimeout(timer);
}

const echo = { routing: ['local'], providers: { local: { type: 'dummy' } } };

function withListen(listen) {
  return toToml({ gateway: { listen, auth: 'open' }, models: { echo } });
}

function withProvider(fields) {
  return toToml({
    gateway: { listen: '127.0.0.1:0' },
    models: { m: { routing: ['p'], providers: { p: { type: 'openai', model: 'x', ...fields } } } },
  });
}

function withApiBase(apiBase) {
  return withProvider({ api_base: apiBase });
}

/** The echo model with `line` (raw TOML: -0.0, nan and inf have no JSON spelling) in its table. */
function withEchoLine(line) {
  const text = toToml({ gateway: { listen: '127.0.0.1:0' }, models: { echo } });
  assert.ok(text.includes('[models.echo]\n'));
  return text.replace('[models.echo]\n', `[models.echo]\n${line}\n`);
}

function withTraces(traces) {
  return toToml({ gateway: { listen: '127.0.0.1:0' }, traces, models: { echo } });
}

const LISTEN = 'gateway.listen';
const API_BASE = 'models.m.providers.p.api_base';
const EXCEEDS = 'must not exceed total_timeout_ms';
const COST = 'must be a finite number >= 0';

// [name, TOML text, key, a part of the reason]
const BAD = [
  ['listen on an address that is not one', withListen('999.1.1.1:0'), LISTEN, 'IPv4'],
  ['listen with a space before the port', withListen('127.0.0.1: 80'), LISTEN, 'port'],
  ['listen as a bare signed port', withListen('+80'), LISTEN, 'HOST:PORT'],
  ['listen with a signed port', withListen('127.0.0.1:+80'), LISTEN, 'port'],
  ['listen on port 65536', withListen('localhost:65536'), LISTEN, 'port'],
  ['listen on an unbracketed IPv6 address', withListen('::1:80'), LISTEN, 'brackets'],
  ['listen on a host name', withListen('example.com:80'), LISTEN, 'localhost'],
  ['api_base port 99999', withApiBase('http://127.0.0.1:99999/v1'), API_BASE, 'port'],
  ['api_base port 0', withApiBase('http://127.0.0.1:0/v1'), API_BASE, 'port'],
  ['api_base with an unclosed IPv6 bracket', withApiBase('http://[::1/v1'), API_BASE, 'valid URL'],
  ['api_base with a query before the path', withApiBase('http://127.0.0.1?x/v1'), API_BASE, 'query'],
  ['api_base with an empty query', withApiBase('http://127.0.0.1:8000/v1?'), API_BASE, 'query'],
  ['api_base with a fragment', withApiBase('http://127.0.0.1:8000/v1#x'), API_BASE, 'fragment'],
  ['api_base with credentials', withApiBase('http://user:pw@127.0.0.1/v1'), API_BASE, 'credentials'],
  ['api_base with a non-ASCII host', withApiBase('http://exämple.com/v1'), API_BASE, 'valid URL'],
  ['api_base with a percent-encoded host', withApiBase('http://ex%C3%A4mple.com/v1'), API_BASE, 'host'],
  ['api_base with an IPvFuture host', withApiBase('http://[v1.x]/v1'), API_BASE, 'host'],
  ['api_base with a shorthand IPv4 host', withApiBase('http://127.1/v1'), API_BASE, 'IPv4'],
  ['api_base with an encoded slash', withApiBase('http://127.0.0.1/a%2Fb'), API_BASE, 'slashes'],
  ['api_base with a .. segment', withApiBase('http://127.0.0.1/a/../v1'), API_BASE, '..'],
  ['first byte timeout over the total',
    withProvider({ api_base: 'http://127.0.0.1:8000/v1', connect_timeout_ms: 100, first_byte_timeout_ms: 900, total_timeout_ms: 800 }),
    'models.m.providers.p.first_byte_timeout_ms', `${EXCEEDS} (800)`],
  ['first byte timeout over the default total',
    withProvider({ api_base: 'http://127.0.0.1:8000/v1', first_byte_timeout_ms: 700000 }),
    'models.m.providers.p.first_byte_timeout_ms', `${EXCEEDS} (600000)`],
  ['default connect timeout over the total',
    withProvider({ api_base: 'http://127.0.0.1:8000/v1', total_timeout_ms: 1000 }),
    'models.m.providers.p.connect_timeout_ms', `${EXCEEDS} (1000)`],
  ['pool idle timeout of 0',
    withProvider({ api_base: 'http://127.0.0.1:8000/v1', pool_idle_timeout_ms: 0 }),
    'models.m.providers.p.pool_idle_timeout_ms', 'between 1 and 86400000'],
  ['pool idle timeout on a dummy provider',
    toToml({ models: { echo: { routing: ['l'], providers: { l: { type: 'dummy', pool_idle_timeout_ms: 100 } } } } }),
    'models.echo.providers.l.pool_idle_timeout_ms', 'not used'],
  ['cost of -0.0', withEchoLine('input_cost_per_token = -0.0'), 'models.echo.input_cost_per_token', COST],
  ['cost of nan', withEchoLine('output_cost_per_token = nan'), 'models.echo.output_cost_per_token', COST],
  ['cost of inf', withEchoLine('input_cost_per_token = inf'), 'models.echo.input_cost_per_token', COST],
  ['negative integer cost', withEchoLine('input_cost_per_token = -1'), 'models.echo.input_cost_per_token', COST],
  ['a traces endpoint over http to another machine', withTraces({ endpoint: 'http://otel.example.com:4318' }),
    'traces.endpoint', 'must be https'],
  ['a traces header written in the file', withTraces({ endpoint: 'https://otel.example.com', headers: { Authorization: 'Bearer x' } }),
    'traces.headers.Authorization', 'env::'],
  ['a sample ratio over 1', withTraces({ sample_ratio: 2 }), 'traces.sample_ratio', 'from 0 to 1'],
  ['a log format of neither text nor json',
    toToml({ gateway: { listen: '127.0.0.1:0' }, log: { format: 'xml' }, models: { echo } }), 'log.format', 'json'],
];

describe('check-config and serve refuse the same files', () => {
  for (const [name, text, key, reason] of BAD) {
    test(`${name}: both exit 1 with FILE: ${key}: reason`, T, async () => {
      const file = writeTempFile('bad.toml', text);
      const checked = await runTollgate(['check-config', file]);
      const served = await serve(file);
      if (served.listening) await stopByPid(served.proc);
      assert.equal(served.listening, null, `serve started listening on ${served.listening}`);
      for (const [what, r] of [['check-config', checked], ['serve', served]]) {
        assert.equal(r.code, 1, `${what} exit ${r.code}; stdout ${r.stdout}; stderr ${r.stderr}`);
        assert.ok(!r.stdout.includes('tollgate listening'), `${what} printed a listening line`);
        const lines = r.stderr.split('\n').filter((l) => l.length > 0);
        assert.equal(lines.length, 1, `${what}: one error line expected:\n${r.stderr}`);
        assert.ok(lines[0].startsWith(`${file}: ${key}: `), `${what}: not "${file}: ${key}: …":\n${lines[0]}`);
        assert.ok(lines[0].slice(`${file}: ${key}: `.length).includes(reason),
          `${what}: reason without "${reason}":\n${lines[0]}`);
      }
      assert.equal(checked.stderr, served.stderr);
    });
  }
});

describe('check-config and serve accept the same files', () => {
  test('localhost:0 passes the check, and serve listens on 127.0.0.1 and answers', T, async () => {
    const text = toToml({
      gateway: { listen: 'localhost:0' },
      models: {
        echo,
        m: {
          input_cost_per_token: 0,
          routing: ['p'],
          providers: {
            p: {
              type: 'openai',
              model: 'x',
              api_base: 'HTTP://Example.com/v1/',
              connect_timeout_ms: 800,
              first_byte_timeout_ms: 800,
              total_timeout_ms: 800,
              pool_idle_timeout_ms: 3000,
            },
          },
        },
      },
    });
    const file = writeTempFile('good.toml', text);
    const checked = await runTollgate(['check-config', file]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.equal(checked.stdout, 'ok\n');
    assert.equal(checked.stderr, '');

    const served = await serve(file);
    try {
      assert.ok(served.listening, `serve exited ${served.code}; stderr:\n${served.stderr}`);
      const [host, port] = served.listening;
      assert.equal(host, '127.0.0.1');
      assert.ok(port > 0);
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    } finally {
      await stopByPid(served.proc);
    }
  });
});
