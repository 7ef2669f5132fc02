// End-to-end: the console's Usage page in Chromium (playwright-core) against the real binary, with
// spend seeded through the API: requests with two tags, with one tag and with none, on three
// keys, one of them revoked, one request costing less than a cent. At 1440 and 375 px wide, in a
// browser zone other than UTC: each tag key's shares sum to 100 % (with a "(no KEY tag)" row);
// money to the cent with the exact figure on hover, "< $0.01" for a sub-cent amount; keys by name,
// a revoked one as "name (revoked)"; day buckets labelled as UTC days, request times in the
// browser's zone with UTC on hover; Reserved explained; no sideways scroll at 375 px on the Usage
// page and the playground; axe-core and the CSP hold. Tokens by kind, after a request whose
// upstream reports 800 of its 1,000 prompt tokens cached and 30 of its 40 completion tokens
// reasoning: the breakdown per model (uncached, cached, written, output), the cached price on the
// Models page and a model's page, and the playground's cost line. Screenshots beside the binary
// (console-screenshots/usage-tags-*.png, playground-long-model-name-*.png, usage-by-kind-*.png,
// model-prices-*.png).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, toToml, waitFor,
} from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';
import {
  BROWSER_SKIP, CHROMIUM, SHOTS, assertAccessible, newPage, screenshots, signInByLink,
} from '../fixtures/browser.mjs';

const T = { timeout: 90_000 };
const dollars = (s) => Number(s.replace(/[$,]/g, ''));
/** The mock reports 1,000 prompt tokens, 800 of them cached, and 40 completion tokens, 30 of them
 * reasoning; padded past 1,100 bytes so that the gateway does not clamp those counts. */
const CACHED_MESSAGE = `mock:cached=800 ${'x'.repeat(1200)}`;

describe('the Usage page in Chromium', { skip: BROWSER_SKIP }, () => {
  let mock;
  let gw;
  let browser;
  const { ok, spend } = adminOf(() => ({ configPath: gw.configPath, env: { XDG_DATA_HOME: gw.dataHome } }));
  const keys = {};

  before(async () => {
    const { chromium } = await import('playwright-core');
    mock = await startMock();
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = standardConfig(mock.url, dead, { gateway: { auth: 'required' } });
    // A model dear enough that one request costs cents; mock_model's requests cost under a cent.
    config.models.pricey_model = {
      ...config.models.mock_model,
      // A long name: the playground's model picker must not make a narrow page scroll sideways.
      display_name: 'Pricey, a model with a long display name that is dear to run',
      input_cost_per_token: 0.001, output_cost_per_token: 0.002,
    };
    // A model whose cache reads cost a tenth of its input, with a cache-write price.
    config.models.cached_model = {
      ...config.models.mock_model,
      input_cost_per_token: 0.000003, output_cost_per_token: 0.000015,
      cached_input_cost_per_token: 0.0000003, cache_write_cost_per_token: 0.00000375,
    };
    config.console = { owner_email: 'owner@usage.test' };
    // And a long-context tier (an array of tables, which toToml does not write).
    const tier = '[[models.cached_model.price_tiers]]\nabove_input_tokens = 200000\ninput_cost_per_token = 0.000006\n';
    gw = await startGateway({ toml: `${toToml(config)}\n${tier}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    fs.mkdirSync(SHOTS, { recursive: true });

    await ok('teams', 'topup', 'default', '100');
    for (const name of ['ci-runner', 'dev-laptop', 'old-key']) {
      keys[name] = (await ok('keys', 'create', '--team', 'default', '--name', name)).stdout.trim();
    }
    const run = async (key, model, tags) => {
      const r = await postJson(gw.baseURL, '/v1/chat/completions', {
        model, messages: [{ role: 'user', content: 'hello' }], ...(tags ? { 'tollgate::tags': tags } : {}),
      }, { headers: { authorization: `Bearer ${keys[key]}` } });
      assert.equal(r.status, 200, r.text);
    };
    await run('ci-runner', 'pricey_model', { env: 'ci', team: 'search' });  // Two tags.
    await run('ci-runner', 'pricey_model', { env: 'ci', team: 'search' });
    await run('dev-laptop', 'pricey_model', { env: 'dev' });
    await run('dev-laptop', 'pricey_model');
    await run('old-key', 'mock_model');  // Under a cent.
    // 800 of the 1,000 prompt tokens read from the cache; the padding keeps the reported counts
    // within the request's bound.
    await postJson(gw.baseURL, '/v1/chat/completions', {
      model: 'cached_model', messages: [{ role: 'user', content: CACHED_MESSAGE }],
    }, { headers: { authorization: `Bearer ${keys['dev-laptop']}` } }).then((r) => assert.equal(r.status, 200, r.text));
    await waitFor(async () => (await spend('default')).length >= 6, 8000);
    const publicId = keys['old-key'].split('-')[2];
    await ok('keys', 'revoke', publicId);
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await mock?.close();
  });

  /** A page signed in as the owner, its browser in New York's zone, on the Usage page. */
  async function usagePage(width) {
    const page = await newPage(browser, width, { timezoneId: 'America/New_York' });
    await signInByLink(page, gw.baseURL, linkToken((await ok('login-link', 'owner@usage.test')).stdout));
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.goto(`${gw.baseURL}/console/usage`);
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.locator('table.rows tbody tr', { hasText: 'pricey_model' }).first().waitFor();
    return page;
  }

  /** No sideways scroll: the document is no wider than the viewport. */
  async function assertNoSidewaysScroll(page, what) {
    const { scroll, client } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
    }));
    assert.ok(scroll <= client, `${what}: the page is ${scroll} px wide in a ${client} px viewport`);
  }

  for (const width of [1440, 375]) {
    test(`at ${width} px: tag shares per tag key sum to 100 %, money to the cent, keys by name, UTC days`, T, async () => {
      const page = await usagePage(width);

      // Money: to the cent, the exact figure on hover; the balance too.
      const balance = page.locator('[data-balance] span');
      assert.match(await balance.textContent(), /^\$\d+\.\d\d$/);
      assert.match(await balance.getAttribute('title'), /^\$\d+\.\d{2,12}$/);
      await page.getByText('Held for requests in flight; returned or charged when they end.').waitFor();
      await page.getByText('Days are UTC days', { exact: false }).waitFor();
      await page.getByRole('columnheader', { name: 'Day (UTC)' }).waitFor({ state: 'attached' });

      // By key: names, the revoked key marked, a sub-cent amount as "< $0.01".
      await page.getByRole('button', { name: 'Key', exact: true }).click();
      const ci = page.locator('table.by-key tbody tr', { hasText: 'ci-runner' });
      await ci.waitFor();
      const ciCost = ci.locator('[data-cost] span');
      const shown = await ciCost.textContent();
      const exact = await ciCost.getAttribute('title');
      assert.match(shown, /^\$\d+\.\d\d$/, `cents: ${shown}`);
      assert.ok(dollars(shown) >= 0.01, `a dear key costs cents: ${shown}`);
      assert.match(exact, /^\$\d+\.\d{2,12}$/);
      assert.equal(dollars(shown), Math.round(dollars(exact) * 100) / 100, `${shown} is ${exact} to the cent`);
      assert.equal(await ci.locator(`[title="Key id ${keys['ci-runner'].split('-')[2]}"]`).count(), 1, 'the public id on hover');
      const old = page.locator('table.by-key tbody tr', { hasText: 'old-key (revoked)' });
      await old.waitFor();
      assert.equal((await old.locator('[data-cost] span').textContent()).trim(), '< $0.01');
      const oldExact = dollars(await old.locator('[data-cost] span').getAttribute('title'));
      assert.ok(oldExact > 0 && oldExact < 0.01, `the exact sub-cent figure: ${oldExact}`);
      assert.equal(await page.locator('table.by-key').getByText(keys['ci-runner'].split('-')[2], { exact: true }).count(), 0,
        'no key shown by its id');

      // By tag: a table per tag key, each key's shares summing to 100 %.
      await page.getByRole('button', { name: 'Tag', exact: true }).click();
      const env = page.locator('[data-tag-key="env"]');
      await env.waitFor();
      const groups = await page.locator('[data-tag-key]').evaluateAll((els) => els.map((el) => ({
        key: el.getAttribute('data-tag-key'),
        rows: [...el.querySelectorAll('tbody tr')].map((tr) => ({
          label: tr.querySelector('td').textContent.trim(),
          pct: Number(tr.querySelector('[data-pct]').textContent.replace('%', '')),
        })),
      })));
      // env and team, and any the gateway adds itself (user_agent).
      assert.ok(['env', 'team'].every((k) => groups.some((g) => g.key === k)), JSON.stringify(groups));
      for (const g of groups) {
        assert.equal(g.rows.reduce((a, r) => a + r.pct, 0), 100, `${g.key}: ${JSON.stringify(g.rows)}`);
      }
      const envRows = groups.find((g) => g.key === 'env').rows;
      assert.deepEqual(envRows.map((r) => r.label), ['ci', 'dev', '(no env tag)']);
      // Two of the four dear requests are env=ci: about half, where counting each tag once per
      // request would have shown about a third.
      const ciPct = envRows[0].pct;
      assert.ok(ciPct >= 45 && ciPct <= 55, `env=ci ${ciPct} %`);
      const teamRows = groups.find((g) => g.key === 'team').rows;
      assert.deepEqual(teamRows.map((r) => r.label), ['search', '(no team tag)']);
      assert.equal(teamRows[0].pct, ciPct, 'team=search is the same requests as env=ci');

      // The rows: keys by name, times in the browser's zone with its abbreviation, UTC on hover.
      const row = page.locator('table.rows tbody tr', { hasText: 'ci-runner' }).first();
      await row.waitFor();
      const time = row.locator('time');
      assert.match(await time.textContent(), /E[SD]T/);
      assert.match(await time.getAttribute('title'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      await page.locator('table.rows tbody tr', { hasText: 'old-key (revoked)' }).waitFor();
      assert.equal((await page.locator('table.rows tbody tr', { hasText: 'old-key' }).locator('[data-cost], td[data-label="Cost"]').first().textContent()).trim(), '< $0.01');

      if (width === 375) await assertNoSidewaysScroll(page, 'usage page');
      await assertAccessible(page, `usage page by tag at ${width} px`);
      if (width === 1440) await screenshots(page, 'usage-tags');

      if (width === 375) {
        await page.goto(`${gw.baseURL}/console/playground`);
        await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
        await page.getByLabel('Model', { exact: true }).waitFor();
        await assertNoSidewaysScroll(page, 'playground');
        await assertAccessible(page, 'playground at 375 px');
        await screenshots(page, 'playground-long-model-name', 375);
      }
      assert.deepEqual(page.cspViolations, [], 'no CSP violation');
      await page.context().close();
    });
  }

  /** A cell's own figure, without the part shown on a line below it. */
  const figure = async (row, col) => (await row.locator(`[data-col="${col}"]`).innerText()).split('\n')[0].trim();

  for (const width of [1440, 375]) {
    test(`at ${width} px: the breakdown per model shows input by kind; the Models page and a model's page the cached price`, T, async () => {
      const page = await usagePage(width);
      await page.getByRole('button', { name: 'Model', exact: true }).click();
      const row = page.locator('table.by-model tbody tr', { hasText: 'cached_model' });
      await row.waitFor();
      assert.deepEqual(
        { uncached: await figure(row, 'uncached'), cached: await figure(row, 'cached'), written: await figure(row, 'written'), output: await figure(row, 'output') },
        { uncached: '200', cached: '800', written: '0', output: '40' },
      );
      assert.equal((await row.locator('[data-col="output"] [data-part]').textContent()).trim(), '30 reasoning');
      const cost = row.locator('[data-cost] span');
      assert.equal((await cost.textContent()).trim(), '< $0.01');
      // 200 uncached at $3, 800 cached at $0.30 and 40 out at $15 per million.
      assert.equal(dollars(await cost.getAttribute('title')), 0.00144);
      for (const header of ['Uncached input', 'Cached', 'Written', 'Output']) {
        await page.getByRole('columnheader', { name: header, exact: true }).waitFor({ state: 'attached' });
      }
      if (width === 375) await assertNoSidewaysScroll(page, 'usage page by model');
      await assertAccessible(page, `usage page by model at ${width} px`);
      if (width === 1440) await screenshots(page, 'usage-by-kind');

      await page.getByRole('link', { name: 'Models' }).click();
      const model = page.locator('table.models tbody tr', { hasText: 'cached_model' });
      await model.waitFor();
      assert.equal((await model.locator('[data-cached-price]').textContent()).trim(), '$0.30');
      assert.equal((await model.locator('td[data-label="Input / 1M"]').textContent()).trim(), '$3.00');
      const more = await model.locator('td[data-label="More prices / 1M"]').textContent();
      assert.match(more, /Cache write \$3\.75/);
      assert.match(more, /Long-context tier above 200,000 tokens/);
      if (width === 375) await assertNoSidewaysScroll(page, 'models page');
      await assertAccessible(page, `models page at ${width} px`);
      await model.getByRole('link', { name: 'cached_model', exact: true }).click();
      await page.getByRole('heading', { name: 'Model cached_model', level: 1 }).waitFor();
      assert.equal((await page.locator('dd[data-cached-price]').textContent()).trim(), '$0.30');
      await page.getByText('Cache write / 1M tokens').waitFor();
      const tierRow = page.locator('table.tiers tbody tr', { hasText: '200,000 tokens' });
      assert.equal((await tierRow.locator('td[data-label="Input / 1M"]').textContent()).trim(), '$6.00');
      if (width === 375) await assertNoSidewaysScroll(page, "the model's page");
      await assertAccessible(page, `a model's page with tiers at ${width} px`);
      if (width === 1440) await screenshots(page, 'model-prices');
      assert.deepEqual(page.cspViolations, [], 'no CSP violation');
      await page.context().close();
    });
  }

  // After the breakdown's tests: a run here adds to cached_model's totals.
  for (const width of [1440, 375]) {
    test(`at ${width} px: the playground's cost line shows the run's cached and reasoning tokens`, T, async () => {
      const page = await usagePage(width);
      await page.getByRole('link', { name: 'Playground' }).click();
      await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
      await page.getByLabel('Model', { exact: true }).selectOption('cached_model');
      await page.getByLabel('Your message').fill(CACHED_MESSAGE);
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const cost = page.locator('[data-stats] [data-cost]');
      await cost.waitFor();
      assert.equal((await page.locator('[data-tokens]').textContent()).trim(), '1,000 in (800 cached), 40 out (30 reasoning)');
      assert.equal((await cost.textContent()).trim(), '$0.00144');
      if (width === 375) await assertNoSidewaysScroll(page, 'playground after a run');
      await assertAccessible(page, `playground after a cached run at ${width} px`);
      assert.deepEqual(page.cspViolations, [], 'no CSP violation');
      await page.context().close();
    });
  }
});
