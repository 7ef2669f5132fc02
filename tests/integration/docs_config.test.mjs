// The provider examples of docs/configuration.md, checked as written: `tollgate check-config`
// accepts the block of Azure, Gemini and Bedrock providers with its variables set, so a user who
// copies it starts a gateway that can call all three.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runTollgate, writeTempFile } from '../fixtures/gateway.mjs';

test('the provider types\' example in configuration.md passes check-config', async () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
  const blocks = [...doc.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]);
  const example = blocks.find((b) => /type = "bedrock"/.test(b));
  assert.ok(example, 'configuration.md has the providers example');
  for (const type of ['azure', 'gemini', 'bedrock']) assert.match(example, new RegExp(`type = "${type}"`));
  const file = writeTempFile('providers.toml', example);
  const env = {
    AZURE_OPENAI_KEY: 'azure-key-for-the-docs-test',
    GEMINI_API_KEY: 'gemini-key-for-the-docs-test',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };
  const r = await runTollgate(['check-config', file], { env });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  // Without its variables the same file names what is missing.
  const bare = await runTollgate(['check-config', file]);
  assert.notEqual(bare.code, 0);
  assert.match(bare.stderr, /environment variable (AZURE_OPENAI_KEY|GEMINI_API_KEY|AWS_ACCESS_KEY_ID) is not set/);
});
