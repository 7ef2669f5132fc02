// Signing in to the console with OpenID Connect, over HTTP as a browser does it (redirects
// followed by hand, one cookie jar for the provider and one for the gateway):
//   - against a real provider (oidc-provider): the whole login and the session it opens, the
//     cookies' attributes, no open redirect, a replayed state, an unverified email, a domain not
//     allowed, a stranger without sign-up, and a rotation of the provider's signing key;
//   - against a fake provider that returns the ID token the test forges: a wrong signature,
//     audience, nonce, an expired token, `alg: none`, an unknown key (the JWKS fetched again
//     once, and not again for the next unknown key), and what the token request carries
//     (client_secret_basic, the PKCE verifier of the challenge sent);
//   - a provider that is down: 502 identity_provider_unavailable, the gateway serving on;
//   - a reload (SIGHUP) that changes the provider: the next start goes to the new one; one that
//     removes it: the start answers 404.
// The gateway sits behind an https public URL (a TLS proxy), so its cookies are __Host- named.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  startGateway, standardConfig, closedPort, adminOf, assertError, toToml, waitFor,
} from '../fixtures/gateway.mjs';
import {
  CLIENT_ID, CLIENT_SECRET, startProvider, startForge, signingKey, startSignIn, loginAtProvider,
  callback, step,
} from '../fixtures/oidc.mjs';
import { samples, total, scrape } from '../fixtures/metrics.mjs';

const PUBLIC_URL = 'https://console.test';
const SECRET_ENV = 'TOLLGATE_TEST_OIDC_SECRET';
const REDIRECT_URI = `${PUBLIC_URL}/console/api/auth/oidc/callback`;

/** A gateway whose console signs in with the provider at `issuer`. */
async function oidcGateway(issuer, consoleExtra = {}) {
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
  config.console = {
    public_url: PUBLIC_URL,
    allowed_email_domains: ['acme.example.com'],
    ...consoleExtra,
    oidc: { issuer, client_id: CLIENT_ID, client_secret: `env::${SECRET_ENV}` },
  };
  const env = { [SECRET_ENV]: CLIENT_SECRET };
  const gw = await startGateway({ config, env });
  const { ok } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome, ...env } }));
  const audit = async () => JSON.parse((await ok('audit', 'list', '--json')).stdout);
  return { gw, ok, audit, config };
}

/** The session cookie a callback's answer set (name=value), or undefined. */
const sessionCookie = (jar) => {
  const v = jar.cookies.get('__Host-tollgate_session');
  return v ? `__Host-tollgate_session=${v}` : undefined;
};

async function me(gw, cookie) {
  const r = await step(`${gw.baseURL}/console/api/me`, { headers: { cookie } });
  return { status: r.status, json: JSON.parse(r.text) };
}

/** Asserts that `r` sends the browser to the sign-in page with `code`, signed out. */
function assertRefused(r, jar, code) {
  assert.equal(r.status, 303, r.text);
  assert.equal(r.location, `/console/signin?error=${code}`);
  assert.equal(sessionCookie(jar), undefined, 'no session is opened');
  assert.ok(!jar.cookies.has('__Host-tollgate_login'), 'the login cookie is cleared');
}

describe('console sign-in with a real OpenID provider', { timeout: 60_000 }, () => {
  let provider;
  let gw;
  let ok;
  let audit;

  const accounts = {
    ann: { email: 'ann@acme.example.com', email_verified: true },
    newcomer: { email: 'newcomer@acme.example.com', email_verified: true },
    unverified: { email: 'unverified@acme.example.com', email_verified: false },
    outsider: { email: 'outsider@elsewhere.example.org', email_verified: true },
  };

  /** The whole login as `login`; resolves {r (the callback's answer), jar (the gateway's)}. */
  const signIn = async (login, returnTo) => {
    const { res, jar, auth } = await startSignIn(gw, { returnTo });
    assert.equal(res.status, 302, res.text);
    const cb = await loginAtProvider(auth, { login, publicUrl: PUBLIC_URL });
    return { r: await callback(gw, cb, jar), jar, cb };
  };

  before(async () => {
    provider = await startProvider({ redirectUri: REDIRECT_URI, accounts });
    ({ gw, ok, audit } = await oidcGateway(provider.issuer));
    for (const email of ['ann@acme.example.com', 'unverified@acme.example.com', 'outsider@elsewhere.example.org']) {
      await ok('users', 'add', email);
    }
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  test('the start redirects to the provider with the code flow, PKCE S256, state and nonce, and sets the login cookie', async () => {
    const { res, jar, auth } = await startSignIn(gw, { returnTo: '/console/teams' });
    assert.equal(res.status, 302, res.text);
    assert.equal(`${auth.origin}${auth.pathname}`, `${provider.issuer}/auth`);
    const q = auth.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), CLIENT_ID);
    assert.equal(q.get('redirect_uri'), REDIRECT_URI);
    assert.equal(q.get('scope'), 'openid email profile');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('state'), /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('nonce'), /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(q.get('state'), q.get('nonce'));
    const set = res.headers.getSetCookie();
    assert.equal(set.length, 1);
    // The sign-in under way travels sealed in the cookie (nothing is stored): its state, nonce
    // and verifier are not readable in it.
    assert.match(set[0], /^__Host-tollgate_login=[A-Za-z0-9_-]{100,}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    const sealed = jar.cookies.get('__Host-tollgate_login');
    assert.ok(!sealed.includes(q.get('state')) && !sealed.includes(q.get('nonce')));
    assert.ok(!Buffer.from(sealed, 'base64url').toString('latin1').includes(q.get('state')));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.ok(!res.location.includes(CLIENT_SECRET));
  });

  test('the whole login: the provider signs ann in, the callback opens a session that works on /console/api/me, and ends on the return path', async () => {
    const { r, jar } = await signIn('ann', '/console/teams?tab=keys');
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/console/teams?tab=keys');
    const set = r.headers.getSetCookie();
    const session = set.find((c) => c.startsWith('__Host-tollgate_session='));
    assert.match(session, /^__Host-tollgate_session=[0-9A-Za-z]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    assert.ok(set.some((c) => c.startsWith('__Host-tollgate_login=;') && c.includes('Max-Age=0')), 'the login cookie is cleared');
    const who = await me(gw, sessionCookie(jar));
    assert.equal(who.status, 200);
    assert.equal(who.json.user.email, 'ann@acme.example.com');
    assert.equal(who.json.sign_in.oidc, true);
    assert.equal(who.json.sign_in.links, false, 'sign-in links are off by default beside a provider');
    const rows = await audit();
    const signin = rows.find((e) => e.action === 'signin' && e.actor === 'ann@acme.example.com');
    assert.equal(signin?.target, 'oidc');
    assert.ok(!gw.stderr.includes(CLIENT_SECRET) && !gw.stdout.includes(CLIENT_SECRET), 'the client secret is never logged');
  });

  test('a return path off the console is never followed (no open redirect)', async () => {
    for (const returnTo of ['https://evil.example/', '//evil.example/console/', '/console/\\evil']) {
      const { r } = await signIn('ann', returnTo);
      assert.equal(r.status, 303, r.text);
      assert.equal(r.location, '/console/', returnTo);
    }
  });

  test('a replayed state is refused: the same callback used twice signs in once', async () => {
    const { res, jar, auth } = await startSignIn(gw);
    assert.equal(res.status, 302);
    const cb = await loginAtProvider(auth, { login: 'ann', publicUrl: PUBLIC_URL });
    const loginCookie = jar.cookies.get('__Host-tollgate_login');
    const first = await callback(gw, cb, jar);
    assert.equal(first.status, 303, first.text);
    assert.ok(sessionCookie(jar));
    // The attacker's replay: the same code and state, the login cookie put back.
    const again = await step(`${gw.baseURL}${cb.pathname}${cb.search}`,
      { headers: { cookie: `__Host-tollgate_login=${loginCookie}` } });
    assert.equal(again.status, 303);
    assert.equal(again.location, '/console/signin?error=sign_in_failed');
    assert.ok(!again.headers.getSetCookie().some((c) => c.startsWith('__Host-tollgate_session=')));
    // The provider's code serves once: the replay is refused at its token endpoint.
    assert.match(gw.stderr, /console sign-in: refused: token endpoint answered 400/);
  });

  test('a login cookie altered, or sealed by another gateway\'s secret, is refused', async () => {
    const { res, jar, auth } = await startSignIn(gw);
    assert.equal(res.status, 302);
    const sealed = jar.cookies.get('__Host-tollgate_login');
    const flipped = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
    const cb = await loginAtProvider(auth, { login: 'ann', publicUrl: PUBLIC_URL });
    for (const cookie of [flipped, 'AAAA', '']) {
      const r = await step(`${gw.baseURL}${cb.pathname}${cb.search}`,
        { headers: { cookie: `__Host-tollgate_login=${cookie}` } });
      assert.equal(r.location, '/console/signin?error=sign_in_failed', cookie);
    }
  });

  test('a callback without this browser\'s login cookie is refused (login CSRF)', async () => {
    const { res, auth } = await startSignIn(gw);
    assert.equal(res.status, 302);
    const cb = await loginAtProvider(auth, { login: 'ann', publicUrl: PUBLIC_URL });
    const otherBrowser = await step(`${gw.baseURL}${cb.pathname}${cb.search}`);
    assert.equal(otherBrowser.location, '/console/signin?error=sign_in_failed');
  });

  test('an email the provider has not verified is refused', async () => {
    const { r, jar } = await signIn('unverified');
    assertRefused(r, jar, 'email_not_verified');
    assert.match(gw.stderr, /console sign-in: refused: ID token: email_unverified/);
  });

  test('an email outside allowed_email_domains is refused, though the user exists', async () => {
    const { r, jar } = await signIn('outsider');
    assertRefused(r, jar, 'email_domain_not_allowed');
    const rows = await audit();
    assert.ok(rows.some((e) => e.action === 'signin.failed' && e.actor === 'outsider@elsewhere.example.org'));
  });

  test('a stranger is not made a user while allow_signup is off', async () => {
    const { r, jar } = await signIn('newcomer');
    assertRefused(r, jar, 'not_invited');
    const users = await audit();
    assert.ok(!users.some((e) => e.action === 'user.signed_up'));
  });

  test('a person the provider vouched for and the gateway refused is a failed sign-in in the metrics', async () => {
    const failed = async () => total(samples((await scrape(gw.baseURL)).text),
      'tollgate_console_sign_ins_total', { outcome: 'failed' });
    const before = await failed();
    const outsider = await signIn('outsider');
    assertRefused(outsider.r, outsider.jar, 'email_domain_not_allowed');
    const newcomer = await signIn('newcomer');
    assertRefused(newcomer.r, newcomer.jar, 'not_invited');
    assert.equal(await failed(), before + 2);
  });

  test('the provider rotates its signing key: the next sign-in still works (its JWKS fetched again for the new kid)', async () => {
    const before = await signIn('ann');
    assert.equal(before.r.status, 303, before.r.text);
    await provider.rotate('k2');
    const afterRotation = await signIn('ann');
    assert.equal(afterRotation.r.status, 303, afterRotation.r.text);
    assert.equal(afterRotation.r.location, '/console/');
    assert.equal((await me(gw, sessionCookie(afterRotation.jar))).json.user.email, 'ann@acme.example.com');
  });

  test('the sign-in page offers the provider and says why a sign-in failed, showing only known codes', async () => {
    const page = await step(`${gw.baseURL}/console/signin?error=email_domain_not_allowed`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/console\/api\/auth\/oidc\/start">Sign in with your identity provider<\/a>/);
    assert.match(page.text, /not in a domain this console accepts/);
    const odd = await step(`${gw.baseURL}/console/signin?error=%3Cscript%3E`);
    assert.ok(!odd.text.includes('<script>') && !odd.text.includes('class="error"'));
  });

  test('a session that ended: the provider\'s link carries the page to return to, percent-encoded; another site is dropped', async () => {
    const ended = await step(`${gw.baseURL}/console/signin?ended=1&return_to=%2Fconsole%2Fusage`);
    assert.match(ended.text, /<h1>Your session ended<\/h1>/);
    assert.match(ended.text, /<a href="\/console\/api\/auth\/oidc\/start\?return_to=%2Fconsole%2Fusage">Sign in with your identity provider<\/a>/);
    assert.doesNotMatch(ended.text, /sign-in link from your operator/);
    const hostile = await step(`${gw.baseURL}/console/signin?ended=1&return_to=${encodeURIComponent('/console/"><script>x</script>')}`);
    assert.ok(!hostile.text.includes('<script>'));
    assert.match(hostile.text, /return_to=%2Fconsole%2F%22%3E%3Cscript%3Ex%3C%2Fscript%3E"/);
    const away = await step(`${gw.baseURL}/console/signin?ended=1&return_to=https%3A%2F%2Fevil.example%2F`);
    assert.match(away.text, /<a href="\/console\/api\/auth\/oidc\/start">/);
  });
});

describe('console sign-in with forged ID tokens', { timeout: 60_000 }, () => {
  let forge;
  let gw;
  let ok;
  let audit;

  /** Starts a sign-in, has the forge answer `token(nonce)`, and calls back. */
  const signInWith = async (token) => {
    const { res, jar, auth } = await startSignIn(gw);
    assert.equal(res.status, 302, res.text);
    const nonce = auth.searchParams.get('nonce');
    forge.idToken = await token(nonce);
    const q = new URLSearchParams({ code: `code-${crypto.randomUUID()}`, state: auth.searchParams.get('state'), iss: forge.issuer });
    const r = await step(`${gw.baseURL}/console/api/auth/oidc/callback?${q}`, { jar });
    return { r, jar, auth };
  };

  /** The last refusal's reason in the gateway's log (anonymous failures are not audited). */
  const lastFailure = () => [...gw.stderr.matchAll(/console sign-in: refused: (.*)/g)].at(-1)?.[1];

  before(async () => {
    forge = await startForge();
    ({ gw, ok, audit } = await oidcGateway(forge.issuer));
    await ok('users', 'add', 'ann@acme.example.com');
  });

  after(async () => {
    await gw?.stop();
    await forge?.close();
  });

  test('a good token signs in; the token request authenticates with client_secret_basic and sends the verifier of the challenge', async () => {
    const { r, jar, auth } = await signInWith((nonce) => forge.sign(forge.claims(nonce)));
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/console/');
    assert.equal((await me(gw, sessionCookie(jar))).json.user.email, 'ann@acme.example.com');
    const sent = forge.tokenRequests.at(-1);
    assert.equal(sent.contentType, 'application/x-www-form-urlencoded');
    assert.equal(sent.authorization, `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`);
    assert.equal(sent.form.grant_type, 'authorization_code');
    assert.equal(sent.form.redirect_uri, REDIRECT_URI);
    assert.ok(!('client_secret' in sent.form));
    const challenge = crypto.createHash('sha256').update(sent.form.code_verifier).digest('base64url');
    assert.equal(challenge, auth.searchParams.get('code_challenge'));
  });

  const refusals = [
    ['a wrong signature (another key, the served kid)', 'bad_signature',
      async (nonce) => forge.sign(forge.claims(nonce), { key: await signingKey('k1'), kid: 'k1' })],
    ['a wrong audience', 'wrong_audience',
      (nonce) => forge.sign({ ...forge.claims(nonce), aud: 'another-client' })],
    ['an expired token', 'expired',
      (nonce) => { const now = Math.floor(Date.now() / 1000); return forge.sign({ ...forge.claims(nonce), iat: now - 900, exp: now - 600 }); }],
    ['a wrong nonce', 'wrong_nonce',
      () => forge.sign(forge.claims(crypto.randomBytes(32).toString('base64url')))],
    ['another issuer', 'wrong_issuer',
      (nonce) => forge.sign({ ...forge.claims(nonce), iss: 'http://127.0.0.1:1' })],
    ['alg none', 'unsupported_alg',
      (nonce) => {
        const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${part({ alg: 'none' })}.${part(forge.claims(nonce))}.AAAA`;
      }],
  ];
  for (const [name, reason, token] of refusals) {
    test(`${name} is refused (sign_in_failed; logged as ${reason})`, async () => {
      const { r, jar } = await signInWith(token);
      assertRefused(r, jar, 'sign_in_failed');
      assert.equal(lastFailure(), `ID token: ${reason}`);
      assert.ok(!gw.stderr.includes(forge.idToken.split('.')[1]), 'no token in the log');
      assert.ok(!JSON.stringify(await audit()).includes(forge.idToken.split('.')[1]), 'no token in the audit log');
    });
  }

  test('an unknown kid fetches the JWKS again once, and the next unknown kid within a minute does not', async () => {
    const stranger = await signingKey('k-unknown');
    const fetches = forge.jwksFetches;
    const first = await signInWith((nonce) => forge.sign(forge.claims(nonce), { key: stranger }));
    assertRefused(first.r, first.jar, 'sign_in_failed');
    assert.equal(lastFailure(), 'ID token: unknown_key');
    assert.equal(forge.jwksFetches, fetches + 1);
    const second = await signInWith((nonce) => forge.sign(forge.claims(nonce), { key: stranger, kid: 'k-other' }));
    assertRefused(second.r, second.jar, 'sign_in_failed');
    assert.equal(forge.jwksFetches, fetches + 1, 'a flood of forged kids costs one fetch a minute');
  });

  test('a token endpoint that refuses the code is sign_in_failed; one that fails is identity_provider_unavailable', async () => {
    const normal = forge.answer;
    try {
      forge.answer = () => ({ status: 400, body: { error: 'invalid_grant' } });
      const refused = await signInWith(() => 'unused');
      assertRefused(refused.r, refused.jar, 'sign_in_failed');
      assert.equal(lastFailure(), 'token endpoint answered 400 invalid_grant');
      forge.answer = () => ({ status: 503, body: { error: 'temporarily_unavailable' } });
      const down = await signInWith(() => 'unused');
      assertRefused(down.r, down.jar, 'identity_provider_unavailable');
    } finally {
      forge.answer = normal;
    }
  });
});

describe('console sign-in with a provider that is down', { timeout: 30_000 }, () => {
  let gw;
  before(async () => {
    ({ gw } = await oidcGateway(`http://127.0.0.1:${await closedPort()}`));
  });
  after(async () => { await gw?.stop(); });

  test('the gateway starts without it; the start answers 502 identity_provider_unavailable; the gateway serves on', async () => {
    const r = await step(`${gw.baseURL}/console/api/auth/oidc/start`);
    assertError({ status: r.status, headers: r.headers, text: r.text, json: JSON.parse(r.text) },
      { status: 502, code: 'identity_provider_unavailable' });
    assert.equal(r.headers.getSetCookie().length, 0);
    const ready = await step(`${gw.baseURL}/ready`);
    assert.equal(ready.status, 200);
  });
});

describe('console sign-in after a reload changes the provider', { timeout: 30_000 }, () => {
  let gw;
  let config;
  let provider;
  before(async () => {
    provider = await startProvider({ redirectUri: REDIRECT_URI, accounts: {} });
    ({ gw, config } = await oidcGateway(`http://127.0.0.1:${await closedPort()}`));
  });
  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  /** Writes `config` and sends SIGHUP; resolves once the gateway says it reloaded. */
  const reload = async () => {
    fs.writeFileSync(gw.configPath, toToml(config));
    const seen = gw.stderr.length;
    process.kill(gw.pid, 'SIGHUP');
    await waitFor(() => gw.stderr.slice(seen).includes('reloaded configuration'), 2000);
    assert.ok(!gw.stderr.slice(seen).includes('needs a restart'), gw.stderr.slice(seen));
  };

  test('the next start goes to the provider the reload names, and none after one that removes it', async () => {
    const down = await step(`${gw.baseURL}/console/api/auth/oidc/start`);
    assert.equal(down.status, 502, down.text);
    config.console.oidc.issuer = provider.issuer;
    await reload();
    const { res, auth } = await startSignIn(gw);
    assert.equal(res.status, 302, res.text);
    assert.equal(`${auth.origin}${auth.pathname}`, `${provider.issuer}/auth`);
    delete config.console.oidc;
    await reload();
    const none = await step(`${gw.baseURL}/console/api/auth/oidc/start`);
    assertError({ status: none.status, headers: none.headers, text: none.text, json: JSON.parse(none.text) },
      { status: 404, code: 'resource_not_found' });
  });
});
