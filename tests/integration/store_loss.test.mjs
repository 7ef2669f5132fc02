// A SQLite store file deleted while the gateway runs: SQLite would write on to the unlinked file
// and every later charge would be lost with it. The gateway notices before its next transaction
// and stops serving billed requests (503 billing_unavailable; once its lease has run out without
// a heartbeat, 503 gateway_fenced), says why on stderr, and does not quietly start an empty store
// in its place.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ENGINES } from '../fixtures/engines.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import {
  startGateway, standardConfig, closedPort, adminOf, postJson, chatBody, assertError,
  assertCompletion, waitFor,
} from '../fixtures/gateway.mjs';

test('a deleted SQLite store stops billed requests, loudly, and is not recreated', { timeout: 30_000 }, async () => {
  const store = await ENGINES[0].start();
  const mock = await startMock();
  let gw;
  try {
    const config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { auth: 'required' } });
    config.storage = store.storage;
    gw = await startGateway({ config, env: store.env });
    const { keyFor } = adminOf(() => ({ configPath: gw.configPath, env: store.env }));
    const key = await keyFor('lost', '10');
    const call = () => postJson(gw.baseURL, '/v1/chat/completions', chatBody('hi'), { headers: { authorization: `Bearer ${key}` } });
    assertCompletion(await call());

    const file = store.storage.url.replace('sqlite://', '');
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    // The answer's charge cannot be recorded: it is withheld, as any failed charge is.
    const r = await call();
    assertError(r, { status: 503, code: 'billing_unavailable' });
    await waitFor(() => /was deleted or replaced/.test(gw.stderr), 3000);
    assert.equal(fs.existsSync(file), false, 'an empty store was created in its place');
    // Its heartbeats fail too: within its lease the charge is refused, after it the request.
    const later = await call();
    assert.equal(later.status, 503, later.text);
    assert.match(later.json.error.code, /^(billing_unavailable|gateway_fenced)$/);
  } finally {
    await gw?.stop();
    await mock.close();
    store.stop();
  }
});
