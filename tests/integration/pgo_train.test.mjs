// bench/pgo_train.mjs, the workload a profile-guided build learns from (scripts/build --pgo): it
// runs against the gateway as built, every request it sends is answered 200, and the gateway it
// started exits cleanly on SIGTERM (an instrumented one writes its profile on that exit). A
// workload that broke would make `scripts/build --pgo` fail, which no other test builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, TOLLGATE_BIN } from '../fixtures/gateway.mjs';

test("the profile-guided build's workload runs against the gateway, every request answered", async () => {
  const script = path.join(REPO_ROOT, 'bench', 'pgo_train.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [script, TOLLGATE_BIN, '1'], { timeout: 60_000 });
  const m = stdout.match(/^pgo_train: (\d+) requests in 1 s$/m);
  assert.ok(m, stdout);
  assert.ok(Number(m[1]) >= 50, `too few requests for a profile: ${stdout}`);
});
