import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SqlDialect } from '../dialect.ts';
import * as initial from './0001-initial.ts';
import * as history from './0002-history-releases-outbox.ts';
import * as body from './0003-template-body.ts';
import * as bodyFollows from './0004-body-follows-columns.ts';
import * as accountUsage from './0005-account-usage.ts';
import * as rateBuckets from './0006-rate-buckets.ts';
import * as registryAuths from './0007-registry-auths.ts';
import * as notifyChanges from './0008-notify-changes.ts';
import * as housekeeping from './0009-housekeeping.ts';
import * as search from './0010-search.ts';
import * as secrets from './0011-secrets.ts';
import * as historyQuota from './0012-history-quota.ts';
import * as filterIndexes from './0013-filter-indexes.ts';
import * as usagePerStatement from './0014-usage-per-statement.ts';
import * as searchFollows from './0015-search-follows-columns.ts';
import * as finalSigma from './0016-search-final-sigma.ts';
import * as valuesChecked from './0017-template-values-checked.ts';
import * as changesTold from './0018-changes-told-to-the-writer.ts';
import * as storagePerAccount from './0019-storage-per-account.ts';
import * as authsOfOwner from './0020-registry-auths-of-their-owner.ts';
import * as namesFolded from './0021-names-compared-folded.ts';
import * as imageChecks from './0022-image-checks.ts';
import * as keyAccess from './0023-key-access-expiry.ts';

// Every migration, in order, and the record each leaves of whether processes of the version before may serve beside it.

type Up = (db: Kysely<unknown>, dialect: SqlDialect) => Promise<void>;
/**
 * A migration from 0023 on declares, in its own file, whether processes of the version before it may go on serving a
 * database it has run on (`compatible`: it only adds what they don't read, and takes nothing they rely on).
 */
type DialectMigration = { up: Up; compatible: boolean | null };
/**
 * The migrations from before the record (null: not declared): every process that reads the record knows them, so
 * theirs is never read. They are recorded as not compatible.
 */
const released = (m: { up: Up }): DialectMigration => ({ up: m.up, compatible: null });

// Versioned, in order; a migration once released is never edited, only followed by a new one.
const ordered: [string, DialectMigration][] = [
  ['0001-initial', released(initial)],
  ['0002-history-releases-outbox', released(history)],
  ['0003-template-body', released(body)],
  ['0004-body-follows-columns', released(bodyFollows)],
  ['0005-account-usage', released(accountUsage)],
  ['0006-rate-buckets', released(rateBuckets)],
  ['0007-registry-auths', released(registryAuths)],
  ['0008-notify-changes', released(notifyChanges)],
  ['0009-housekeeping', released(housekeeping)],
  ['0010-search', released(search)],
  ['0011-secrets', released(secrets)],
  ['0012-history-quota', released(historyQuota)],
  ['0013-filter-indexes', released(filterIndexes)],
  ['0014-usage-per-statement', released(usagePerStatement)],
  ['0015-search-follows-columns', released(searchFollows)],
  ['0016-search-final-sigma', released(finalSigma)],
  ['0017-template-values-checked', released(valuesChecked)],
  ['0018-changes-told-to-the-writer', released(changesTold)],
  ['0019-storage-per-account', released(storagePerAccount)],
  ['0020-registry-auths-of-their-owner', released(authsOfOwner)],
  ['0021-names-compared-folded', released(namesFolded)],
  ['0022-image-checks', released(imageChecks)],
  ['0023-key-access-expiry', keyAccess],
];

/** Kysely's own bookkeeping: the migrations a database has had. */
export const KYSELY_MIGRATIONS = 'kysely_migration';
/** Ours, beside it: each migration run, and whether processes of the version before may serve alongside it. */
export const COMPATIBILITY_RECORD = 'podplate_migrations';

/** Each migration's declaration, by name, as this version knows them (null: from before the record). */
export const declared = (): Map<string, boolean | null> => new Map(ordered.map(([name, m]) => [name, m.compatible]));

/** Records, in the migration's own transaction, that `name` ran and what it declares. */
async function record(db: Kysely<unknown>, dialect: SqlDialect, name: string, compatible: boolean | null): Promise<void> {
  await sql`create table if not exists ${sql.table(COMPATIBILITY_RECORD)} (name text primary key, compatible integer not null, applied_at ${sql.raw(
    dialect.timestampType,
  )} not null)`.execute(db);
  await sql`insert into ${sql.table(COMPATIBILITY_RECORD)} (name, compatible, applied_at) values (${name}, ${compatible === true ? 1 : 0}, ${new Date().toISOString()})
    on conflict (name) do nothing`.execute(db);
}

export function migrations(dialect: SqlDialect): Record<string, Migration> {
  return Object.fromEntries(
    ordered.map(([name, m]) => [
      name,
      {
        up: async (db: Kysely<unknown>) => {
          await m.up(db, dialect);
          await record(db, dialect, name, m.compatible);
        },
      },
    ]),
  );
}
