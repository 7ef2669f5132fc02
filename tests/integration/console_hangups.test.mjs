// Clients that hang up while a console call runs on the account service's thread: the hang-up
// watch cancels the session, and the cancellation must not reach across to that thread (Boost
// 1.81's co_spawn posted it there with a pointer that the call's end freed: a use after free
// that crashed the gateway when a browser left a page with its fetches in flight).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startGateway, standardConfig, closedPort, sleep } from '../fixtures/gateway.mjs';
import { startMock } from '../fixtures/mock_upstream.mjs';
import { linkToken, consoleSession } from '../fixtures/console.mjs';

/** Sends `head` on a new connection and resets it after `afterMs`; resolves once it is gone. */
function hangUp(port, head, afterMs) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head);
      setTimeout(() => { socket.resetAndDestroy(); }, afterMs);
    });
    socket.on('close', resolve);
    socket.on('error', () => {});
  });
}

describe('console calls whose clients hang up', () => {
  let mock;
  let gw;
  let s;
  let teamId;

  before(async () => {
    mock = await startMock();
    const config = standardConfig(mock.url, `http://127.0.0.1:${await closedPort()}/v1`, { gateway: { auth: 'required' } });
    config.console = { owner_email: 'owner@hangups.test' };
    gw = await startGateway({ config });
    s = await consoleSession(gw).signIn(linkToken(gw.stdout));  // The owner's first link.
    teamId = await s.teamId('default');
    for (let i = 0; i < 5; i++) {
      const made = await s.call('POST', `/console/api/teams/${teamId}/keys`, { name: `key-${i}` });
      assert.equal(made.status, 201, made.text);
    }
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('hundreds of them, reset at every moment of their calls, leave the gateway serving', async () => {
    const head = `GET /console/api/teams/${teamId}/keys HTTP/1.1\r\nHost: x\r\nOrigin: ${gw.baseURL}\r\n` +
      `Cookie: ${s.cookie}\r\n\r\n`;
    // Resets from at once to a few milliseconds in, 16 at a time: some land before the call
    // reaches the service's thread, some while it runs there, some as it ends.
    for (let round = 0; round < 40; round++) {
      await Promise.all(Array.from({ length: 16 }, (_, i) => hangUp(gw.port, head, (round + i) % 5)));
    }
    await sleep(50);
    assert.ok(gw.alive, `the gateway died: ${gw.stderr.slice(-400)}`);
    const keys = await s.call('GET', `/console/api/teams/${teamId}/keys`);
    assert.equal(keys.status, 200, keys.text);
    assert.ok(keys.json.length >= 5, keys.text);
  });
});
