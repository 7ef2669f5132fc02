// The README's console example, run as written: its shell lines between the readme-console
// markers, with the sign-in link the first start printed and this gateway's address in place of
// 127.0.0.1:8080, must sign in, create a key through the console and get an answer on /v1 with it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startGateway, standardConfig, closedPort } from '../fixtures/gateway.mjs';
import { linkToken } from '../fixtures/console.mjs';

test('the README\'s console lines sign in, make a key and use it', async () => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /<!-- readme-console-start -->\n```sh\n([\s\S]*?)```\n<!-- readme-console-end -->/.exec(readme);
  assert.ok(block, 'the README has the console example between its markers');
  const dead = `http://127.0.0.1:${await closedPort()}/v1`;
  const config = standardConfig(dead, dead, { gateway: { auth: 'required' } });
  config.models.echo = { routing: ['local'], providers: { local: { type: 'dummy' } } };
  const gw = await startGateway({ config });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-readme-'));
  try {
    const link = `${gw.baseURL}/console/signin?token=${linkToken(gw.stdout)}`;
    const script = block[1]
      .replace(/^LINK='[^']*'/m, `LINK='${link}'`)
      .replaceAll('http://127.0.0.1:8080', gw.baseURL);
    assert.notEqual(script, block[1]);
    const output = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    // The sign-in's answer and the completion are printed one after the other: the completion
    // is the JSON value that ends the output.
    let answer;
    for (const m of output.matchAll(/\{/g)) {
      try { answer = JSON.parse(output.slice(m.index)); break; } catch { /* not where it starts */ }
    }
    assert.ok(answer, `no JSON answer in: ${output}`);
    assert.equal(answer.object, 'chat.completion');
    assert.match(answer.choices[0].message.content, /Hello from the console/);
  } finally {
    await gw.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
