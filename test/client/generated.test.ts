import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generatedClientFiles } from '../../scripts/openapi-document.ts';

// The typed client can never drift from the service: its committed document and types are what the app generates now.
test('openapi/podplate.json and src/client/schema.d.ts are up to date (else run npm run gen:client)', async () => {
  const files = await generatedClientFiles();
  assert.equal(files.length, 2);
  for (const { path, text } of files) {
    assert.ok(text.length > 1000, path);
    assert.equal(readFileSync(path, 'utf8'), text, `${path} is stale: run npm run gen:client and commit the result`);
  }
});
