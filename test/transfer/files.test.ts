import assert from 'node:assert/strict';
import { chownSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { freshDatabase } from '../support/harness.ts';
import { podplate } from '../support/process.ts';

// The files the admin commands write hold every env value of an install: made 0600 under a temporary name no other
// user can plant, and put in place whole. Files of another user are refused, and a missing folder or file is one line
// and exit 1, never a stack trace.

const NOBODY = 65534;

/** A fresh SQLite install, migrated, in a folder of its own; `work` gets its folder and environment. */
async function withInstall(work: (dir: string, env: Record<string, string>) => Promise<void> | void): Promise<void> {
  const db = await freshDatabase('sqlite');
  const env = { DATABASE_URL: db.url };
  try {
    assert.equal(podplate(['migrate'], env).code, 0);
    await work(join(db.url.slice('sqlite:'.length), '..'), env);
  } finally {
    await db.drop();
  }
}

/** One line on stderr, exit 1, naming `what`. */
function oneLine(r: ReturnType<typeof podplate>, what: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, what);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
}

test('export and backup write files 0600, and a link planted where the old temporary file went is left alone', () =>
  withInstall((dir, env) => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'untouched');
    const exported = join(dir, 'install.ndjson');
    const backup = join(dir, 'copy.db');
    for (const file of [exported, backup]) symlinkSync(victim, `${file}.partial`);
    assert.equal(podplate(['export', '--output', exported], env).code, 0);
    assert.equal(podplate(['backup', backup], env).code, 0);
    for (const file of [exported, backup]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
    assert.equal(readFileSync(victim, 'utf8'), 'untouched');
    assert.ok(lstatSync(`${exported}.partial`).isSymbolicLink());
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.partial') && !f.startsWith('install.ndjson.partial') && !f.startsWith('copy.db.partial')),
      [],
      'no temporary file is left behind',
    );
  }));

test('a missing folder or file is one line and exit 1', () =>
  withInstall((dir, env) => {
    oneLine(
      podplate(['export', '--output', join(dir, 'no/such/folder/x.ndjson')], env),
      /cannot export to .*: the folder .* does not exist/,
    );
    oneLine(podplate(['backup', join(dir, 'no/such/folder/x.db')], env), /cannot back up to .*: the folder .* does not exist/);
    oneLine(podplate(['import', '--input', join(dir, 'missing.ndjson')], env), /cannot read .*missing\.ndjson/);
  }));

test('a database or secrets key file of another user is refused, naming it', () =>
  withInstall((_dir, env) => {
    const file = (env.DATABASE_URL as string).slice('sqlite:'.length);
    const key = `${file}.secrets-key`;
    assert.equal(podplate(['secrets', 'rotate'], env).code, 0, 'makes the key file');
    chownSync(key, NOBODY, NOBODY);
    oneLine(podplate(['secrets', 'rotate'], env), /the secrets key file .* belongs to another user \(uid 65534\)/);
    chownSync(file, NOBODY, NOBODY);
    oneLine(podplate(['migrate'], env), /the database file .* belongs to another user \(uid 65534\)/);
  }));
