import assert from 'node:assert/strict';
import { test } from 'node:test';
import { otherSchemaVanished } from '../../src/store/store.ts';

// Kysely's migrator looks for its tables in every schema of a PostgreSQL database; one that another install (or
// test) drops meanwhile fails the look, and the migration is tried again. Never when it is the install's own.

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

test("another schema, or a table of one, vanishing is tried again; the install's own never", () => {
  const mine = 'test_1_aaaa';
  assert.equal(otherSchemaVanished(failure('3F000', 'schema "test_2_bbbb" does not exist'), mine), true);
  assert.equal(otherSchemaVanished(failure('42P01', 'relation "test_2_bbbb.registry_auths" does not exist'), mine), true);
  assert.equal(otherSchemaVanished(failure('3F000', `schema "${mine}" does not exist`), mine), false);
  assert.equal(otherSchemaVanished(failure('42P01', `relation "${mine}.templates" does not exist`), mine), false);
  assert.equal(otherSchemaVanished(failure('23505', 'duplicate key'), mine), false);
  assert.equal(otherSchemaVanished(failure('3F000', 'schema "x" does not exist'), undefined), false, 'SQLite has no schemas');
});
