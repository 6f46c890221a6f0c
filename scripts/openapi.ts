// Writes the service's OpenAPI document to openapi/podplate.json and the typed client's types to
// src/client/schema.d.ts (npm run gen:client). With --check it writes nothing and fails if either is stale, so that
// npm run lint lints the document the app publishes; test/client/generated.test.ts checks the same.
import { readFileSync, writeFileSync } from 'node:fs';
import { generatedClientFiles } from './openapi-document.ts';

const check = process.argv.includes('--check');
let stale = false;
for (const { path, text } of await generatedClientFiles()) {
  if (!check) {
    writeFileSync(path, text);
    process.stderr.write(`wrote ${path}\n`);
  } else if (readFileSync(path, 'utf8') !== text) {
    stale = true;
    process.stderr.write(`${path} is not what the app generates: run npm run gen:client and commit it.\n`);
  }
}
if (stale) process.exitCode = 1;
