// The console's pages as the gateway serves them, without a browser: the HTML shell for /console/
// and its client-side routes, the built assets (gzipped when accepted, cached for a year under
// their content-hashed names), the strict Content-Security-Policy on every page (the sign-in
// page included), 404s, not the shell, for unknown API calls and assets, and the form sign-in a
// browser sends under that page's no-referrer policy.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import http from 'node:http';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { startGateway, standardConfig, closedPort, assertError, runTollgate } from '../fixtures/gateway.mjs';
import { request, linkToken } from '../fixtures/console.mjs';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** GET `pathname` with `headers`; resolves {status, headers, body (raw bytes)}. */
function getRaw(baseURL, pathname, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(new URL(baseURL + pathname), { headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

function assertPageHeaders(headers, what) {
  assert.equal(headers['content-security-policy'], CSP, `${what}: CSP`);
  assert.equal(headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.equal(headers['referrer-policy'], 'no-referrer', `${what}: referrer policy`);
}

describe('console pages', () => {
  let mock;
  let gw;

  before(async () => {
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    gw = await startGateway({ config: standardConfig(mock.url, dead, { gateway: { auth: 'required' } }) });
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('/console/ and every client-side route answer the HTML shell, which loads hashed assets only', async () => {
    let first;
    for (const p of ['/console', '/console/', '/console/keys', '/console/models', '/console/team', '/console/playground',
      '/console/usage', '/console/audit', '/console/invite?token=inv-tollgate-x', '/console/some/deep/route']) {
      const r = await getRaw(gw.baseURL, p);
      assert.equal(r.status, 200, p);
      assert.match(r.headers['content-type'], /^text\/html; charset=utf-8$/);
      assert.equal(r.headers['cache-control'], 'no-store', p);
      assertPageHeaders(r.headers, p);
      const html = r.body.toString();
      assert.doesNotMatch(html, /<style|<script>|style=/, 'no inline script or style');
      first ??= html;
      assert.equal(html, first, 'the same shell for every route');
    }
    assert.match(first, /<script type="module" src="\/console\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    assert.match(first, /<link rel="stylesheet" href="\/console\/assets\/main-[A-Z0-9]+\.css">/);
  });

  test('assets: gzipped when accepted, plain otherwise, immutable for a year; sizes printed', async () => {
    const shell = (await getRaw(gw.baseURL, '/console/')).body.toString();
    const names = [...shell.matchAll(/\/console\/assets\/([^"]+)"/g)].map((m) => m[1]);
    assert.equal(names.length, 2, shell);
    let plainTotal = 0;
    let gzipTotal = 0;
    for (const name of names) {
      const gz = await getRaw(gw.baseURL, `/console/assets/${name}`, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(gz.status, 200);
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gz.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(gz.headers.vary, 'Accept-Encoding');
      assertPageHeaders(gz.headers, name);
      const plain = await getRaw(gw.baseURL, `/console/assets/${name}`);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.deepEqual(zlib.gunzipSync(gz.body), plain.body, 'the gzipped bytes are the plain ones');
      assert.match(plain.headers['content-type'], name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      plainTotal += plain.body.length;
      gzipTotal += gz.body.length;
    }
    console.log(`console assets: ${names.join(', ')}: ${plainTotal} bytes, ${gzipTotal} gzipped`);
    assert.ok(gzipTotal < 150 * 1024, `assets are ${gzipTotal} bytes gzipped, over the budget of 150 KB`);
  });

  test('unknown assets and API calls are 404s, not the shell; the API keeps its routes', async () => {
    assertError(await request(gw.baseURL, 'GET', '/console/assets/main-NOPE.js'), { status: 404, code: 'not_found' });
    assertError(await request(gw.baseURL, 'GET', '/console/api/nothing-here'), { status: 404, code: 'not_found' });
    assertError(await request(gw.baseURL, 'GET', '/console/api'), { status: 404, code: 'not_found' });
    assertError(await request(gw.baseURL, 'GET', '/console/api/me'), { status: 401, code: 'not_signed_in' });
  });

  test('the sign-in page keeps its button under the same strict policy, styled by the built stylesheet', async () => {
    const token = linkToken(gw.stdout);
    const r = await getRaw(gw.baseURL, `/console/signin?token=${token}`);
    assert.equal(r.status, 200);
    assertPageHeaders(r.headers, 'sign-in page');
    const html = r.body.toString();
    assert.match(html, /<link rel="stylesheet" href="\/console\/assets\/main-[A-Z0-9]+\.css">/);
    assert.match(html, /<form method="post" action="\/console\/api\/auth\/link">/);
    assert.doesNotMatch(html, /<style|<script|style=/);
  });

  test('under no-referrer a browser\'s own form posts Origin: null; only Sec-Fetch-Site: same-origin makes that same-origin', async () => {
    const post = (token, headers) => request(gw.baseURL, 'POST', '/console/api/auth/link', {
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: `token=${token}`,
    });
    const token = linkToken((await runTollgate(['admin', '--config', gw.configPath, 'login-link', 'null@pages.test'],
      { env: { XDG_DATA_HOME: gw.dataHome } })).stdout);
    assertError(await post(token, { origin: 'null' }), { status: 403, code: 'csrf_failed' });
    assertError(await post(token, { origin: 'null', 'sec-fetch-site': 'cross-site' }), { status: 403, code: 'csrf_failed' });
    assertError(await post(token, { origin: 'null', 'sec-fetch-site': 'same-site' }), { status: 403, code: 'csrf_failed' });
    assertError(await post(token, { 'sec-fetch-site': 'same-origin' }), { status: 403, code: 'csrf_failed' });
    const r = await post(token, { origin: 'null', 'sec-fetch-site': 'same-origin' });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.headers.get('location'), '/console/');
  });
});
