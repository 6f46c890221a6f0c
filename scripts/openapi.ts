// Writes the service's OpenAPI document to openapi/podplate.json and the typed client's types to
// src/client/schema.d.ts (npm run gen:client). test/client/generated.test.ts fails when either is stale.
import { writeFileSync } from 'node:fs';
import { generatedClientFiles } from './openapi-document.ts';

for (const { path, text } of await generatedClientFiles()) {
  writeFileSync(path, text);
  process.stderr.write(`wrote ${path}\n`);
}
