// Who gets in, and what an anonymous caller can make the gateway write:
//   - floods of bad sign-in links, OIDC callbacks and OIDC starts, from many sources (behind a
//     trusted proxy, so X-Forwarded-For names each source), write at most one audit row (a
//     summary) and no sign-in state;
//   - a source that failed 30 times in a minute is refused (429 sign_in_throttled, Retry-After)
//     before any store access, other sources are not; a successful sign-in starts its count again;
//   - a person is the (issuer, subject) the provider vouched for: another subject with the same
//     email is refused (identity_mismatch) until an operator unlinks the address; non-routable
//     addresses (owner@localhost) never sign in through a provider.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startGateway, standardConfig, closedPort, adminOf, assertError } from '../fixtures/gateway.mjs';
import { request, linkToken } from '../fixtures/console.mjs';
import { CLIENT_ID, CLIENT_SECRET, startForge, startSignIn, step } from '../fixtures/oidc.mjs';

const PUBLIC_URL = 'https://console.example.com';
const SECRET_ENV = 'TOLLGATE_TEST_OIDC_SECRET';
const FLOOD = 200;

async function gatewayWith(forge, { console: extra = {}, gateway = {} } = {}) {
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = standardConfig(dead, dead, { gateway: { auth: 'required', ...gateway } });
  config.console = {
    public_url: PUBLIC_URL,
    ...extra,
    oidc: { issuer: forge.issuer, client_id: CLIENT_ID, client_secret: `env::${SECRET_ENV}` },
  };
  const env = { [SECRET_ENV]: CLIENT_SECRET };
  const gw = await startGateway({ config, env });
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome, ...env } }));
  const audit = async () => JSON.parse((await ok('audit', 'list', '--json')).stdout);
  return { gw, ok, audit };
}

/** A POST of sign-in link `token` from `source` (the trusted proxy's X-Forwarded-For). */
const postLink = (gw, token, source) => request(gw.baseURL, 'POST', '/console/api/auth/link', {
  headers: { origin: PUBLIC_URL, 'x-forwarded-for': `203.0.113.7, ${source}` },
  body: { token },
});
const badToken = () => `ll-tollgate-${crypto.randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
const from = (source) => ({ headers: { 'x-forwarded-for': source } });

describe('anonymous sign-in attempts', { timeout: 90_000 }, () => {
  let forge;
  let gw;
  let ok;
  let audit;

  before(async () => {
    forge = await startForge();
    ({ gw, ok, audit } = await gatewayWith(forge, { console: { login_links: true }, gateway: { trusted_proxies: ['127.0.0.1'] } }));
  });
  after(async () => {
    await gw?.stop();
    await forge?.close();
  });

  test(`${FLOOD} bad links, ${FLOOD} OIDC callbacks and ${FLOOD} OIDC starts write one audit row at most`, async () => {
    const before = (await audit()).length;
    for (let i = 0; i < FLOOD; i += 1) {
      const source = `10.1.${i >> 8}.${i & 255}`;
      const r = await postLink(gw, badToken(), source);
      assertError(r, { status: 401, code: 'sign_in_failed' });
      const cb = await step(`${gw.baseURL}/console/api/auth/oidc/callback?state=s${i}&code=c${i}&error=${'x'.repeat(60)}`, from(source));
      assert.equal(cb.location, '/console/signin?error=sign_in_failed');
      const start = await step(`${gw.baseURL}/console/api/auth/oidc/start`, from(source));
      assert.equal(start.status, 302);
    }
    const rows = (await audit()).slice(0, (await audit()).length - before);
    assert.ok(rows.length <= 1, JSON.stringify(rows));
    for (const row of rows) {
      assert.equal(row.action, 'signin.failed');
      assert.match(row.target, /^\d+ failed sign-ins?(; busiest sources: .*)?$/);
      assert.ok(!row.target.includes('xxxx'), 'never the caller\'s text');
    }
  });

  test('after 30 failures in a minute a source is refused with 429 and Retry-After; other sources are not', async () => {
    const source = '10.9.9.9';
    for (let i = 0; i < 30; i += 1) {
      assertError(await postLink(gw, badToken(), source), { status: 401, code: 'sign_in_failed' });
    }
    const refused = await postLink(gw, badToken(), source);
    assertError(refused, { status: 429, type: 'rate_limit_error', code: 'sign_in_throttled' });
    const wait = Number(refused.headers.get('retry-after'));
    assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
    const cb = await step(`${gw.baseURL}/console/api/auth/oidc/callback?state=s&code=c`, from(source));
    assert.equal(cb.status, 429, 'the callback is refused too');
    const start = await step(`${gw.baseURL}/console/api/auth/oidc/start`, from(source));
    assert.equal(start.status, 429, 'and the start');
    assertError(await postLink(gw, badToken(), '10.9.9.10'), { status: 401, code: 'sign_in_failed' });
  });

  test('an IPv6 source is counted by its /64', async () => {
    for (let i = 0; i < 30; i += 1) {
      await postLink(gw, badToken(), `2001:db8:1:2::${(i + 1).toString(16)}`);
    }
    const refused = await postLink(gw, badToken(), '2001:db8:1:2:ffff::1');
    assertError(refused, { status: 429, code: 'sign_in_throttled' });
    assertError(await postLink(gw, badToken(), '2001:db8:1:3::1'), { status: 401, code: 'sign_in_failed' });
  });

  test('a successful sign-in starts its source\'s count again', async () => {
    const source = '10.8.8.8';
    await ok('users', 'add', 'kim@acme.example.com');
    for (let i = 0; i < 29; i += 1) {
      await postLink(gw, badToken(), source);
    }
    const good = linkToken((await ok('login-link', 'kim@acme.example.com')).stdout);
    const r = await postLink(gw, good, source);
    assert.equal(r.status, 200, r.text);
    for (let i = 0; i < 30; i += 1) {
      assertError(await postLink(gw, badToken(), source), { status: 401, code: 'sign_in_failed' });
    }
    assertError(await postLink(gw, badToken(), source), { status: 429, code: 'sign_in_throttled' });
  });

  test('no sign-in under way is stored: the start writes nothing, the login travels sealed', async () => {
    const { res, jar } = await startSignIn(gw);
    assert.equal(res.status, 302);
    assert.match(jar.cookies.get('tollgate_login') ?? jar.cookies.get('__Host-tollgate_login'), /^[A-Za-z0-9_-]{100,}$/);
  });
});

describe('a person is the provider\'s (issuer, subject)', { timeout: 60_000 }, () => {
  let forge;
  let gw;
  let ok;
  let audit;

  /** A sign-in whose ID token has `claims` over the forge's good ones. */
  const signInAs = async (claims) => {
    const { res, jar, auth } = await startSignIn(gw);
    assert.equal(res.status, 302, res.text);
    forge.idToken = await forge.sign({ ...forge.claims(auth.searchParams.get('nonce')), ...claims });
    const q = new URLSearchParams({ code: `code-${crypto.randomUUID()}`, state: auth.searchParams.get('state'), iss: forge.issuer });
    return step(`${gw.baseURL}/console/api/auth/oidc/callback?${q}`, { jar });
  };

  before(async () => {
    forge = await startForge();
    ({ gw, ok, audit } = await gatewayWith(forge, { console: { allow_signup: true } }));
    await ok('users', 'add', 'ann@acme.example.com');
  });
  after(async () => {
    await gw?.stop();
    await forge?.close();
  });

  test('the first sign-in binds the address to its subject; another subject with it (any case) is refused', async () => {
    const first = await signInAs({ sub: 'ann-at-idp' });
    assert.equal(first.location, '/console/', first.text);
    assert.ok((await audit()).some((e) => e.action === 'user.identity_linked' && e.actor === 'ann@acme.example.com'));
    const other = await signInAs({ sub: 'mallory', email: 'ANN@ACME.EXAMPLE.COM' });
    assert.equal(other.location, '/console/signin?error=identity_mismatch');
    assert.ok(!other.headers.getSetCookie().some((c) => c.includes('tollgate_session=') && !c.includes('Max-Age=0')));
    const page = await step(`${gw.baseURL}/console/signin?error=identity_mismatch`);
    assert.match(page.text, /tollgate admin users unlink EMAIL/);
    // The bound subject is ann whatever email it carries now.
    const renamed = await signInAs({ sub: 'ann-at-idp', email: 'ann.new@acme.example.com' });
    assert.equal(renamed.location, '/console/');
  });

  test('unlinked by the operator, the address binds to the next subject, and the sessions can be ended', async () => {
    const r = await ok('users', 'unlink', 'ann@acme.example.com');
    assert.match(r.stdout, /unlinked/);
    const next = await signInAs({ sub: 'ann-new-idp-account' });
    assert.equal(next.location, '/console/', next.text);
    const ended = await ok('users', 'sessions-end', 'ann@acme.example.com');
    assert.match(ended.stdout, /ended [1-9]\d* console session/);
    const actions = (await audit()).map((e) => e.action);
    assert.ok(actions.includes('user.identity_unlinked') && actions.includes('user.sessions_ended'));
  });

  test('non-routable addresses never sign in through a provider, even verified and with sign-up on', async () => {
    for (const email of ['owner@localhost', 'OWNER@LOCALHOST', 'a@intranet', 'b@box.local', 'c@x.internal', 'd@x.test']) {
      const r = await signInAs({ sub: `s-${email}`, email });
      assert.equal(r.location, '/console/signin?error=email_not_allowed', email);
    }
  });
});
