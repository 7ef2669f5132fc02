// `tollgate check-config FILE` runs exactly the validation `tollgate serve --config FILE` runs:
// a file one refuses the other refuses with the same `FILE: KEY: reason` line, and values that
// used to pass the check and then fail (or mean something else) at serve time are refused.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toToml, writeTempFile, runTollgate, startGateway } from '../fixtures/gateway.mjs';

const T = { timeout: 15_000 };

const echo = { routing: ['local'], providers: { local: { type: 'dummy' } } };

function withListen(listen) {
  return { gateway: { listen, auth: 'open' }, models: { echo } };
}

function withApiBase(apiBase, extra = {}) {
  return {
    gateway: { listen: '127.0.0.1:0' },
    models: {
      m: { routing: ['p'], providers: { p: { type: 'openai', model: 'x', api_base: apiBase, ...extra } } },
    },
  };
}

const BAD = [
  ['listen localhost-style typo', withListen('999.1.1.1:0'), 'gateway.listen'],
  ['listen with a space before the port', withListen('127.0.0.1: 80'), 'gateway.listen'],
  ['listen with a signed port', withListen('127.0.0.1:+80'), 'gateway.listen'],
  ['listen with an unbracketed IPv6 address', withListen('::1:80'), 'gateway.listen'],
  ['api_base port 99999', withApiBase('http://127.0.0.1:99999/v1'), 'models.m.providers.p.api_base'],
  ['api_base with an unclosed IPv6 bracket', withApiBase('http://[::1/v1'), 'models.m.providers.p.api_base'],
  ['api_base with a query before the path', withApiBase('http://127.0.0.1?x/v1'), 'models.m.providers.p.api_base'],
  ['api_base with a non-ASCII host', withApiBase('http://exämple.com/v1'), 'models.m.providers.p.api_base'],
  ['first byte timeout over the total', withApiBase('http://127.0.0.1:8000/v1', { connect_timeout_ms: 100, first_byte_timeout_ms: 900, total_timeout_ms: 800 }),
    'models.m.providers.p.first_byte_timeout_ms'],
];

describe('check-config and serve refuse the same files', () => {
  for (const [name, config, key] of BAD) {
    test(`${name}: both exit 1 with FILE: ${key}: reason`, T, async () => {
      const file = writeTempFile('bad.toml', toToml(config));
      const checked = await runTollgate(['check-config', file]);
      const served = await runTollgate(['serve', '--config', file]);
      for (const [what, r] of [['check-config', checked], ['serve', served]]) {
        assert.equal(r.code, 1, `${what} exit ${r.code}; stdout ${r.stdout}; stderr ${r.stderr}`);
        assert.ok(!r.stdout.includes('tollgate listening'), `${what} started listening`);
        const line = r.stderr.split('\n').find((l) => l.startsWith(`${file}: ${key}: `));
        assert.ok(line, `${what}: no "${file}: ${key}: …" line in:\n${r.stderr}`);
      }
      assert.equal(checked.stderr.trim(), served.stderr.trim());
    });
  }

  test('negative zero cost is refused', T, async () => {
    const text = toToml({ models: { echo } }).replace('[models.echo]', '[models.echo]\ninput_cost_per_token = -0.0');
    const file = writeTempFile('bad.toml', text);
    const r = await runTollgate(['check-config', file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /models\.echo\.input_cost_per_token: must be a finite number >= 0/);
  });

  test('localhost:0 passes the check and serves on 127.0.0.1', T, async () => {
    const config = withListen('localhost:0');
    const file = writeTempFile('good.toml', toToml(config));
    const checked = await runTollgate(['check-config', file]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stdout, /^ok$/m);
    const gw = await startGateway({ config });
    try {
      assert.match(gw.baseURL, /127\.0\.0\.1:\d+/);
      const res = await fetch(`${gw.baseURL}/health`);
      assert.equal(res.status, 200);
    } finally {
      await gw.stop();
    }
  });
});
