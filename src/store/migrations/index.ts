import type { Kysely } from 'kysely';
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

// Every migration, in order.

type DialectMigration = { up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> };

// Versioned, in order; a migration once released is never edited, only followed by a new one.
const ordered: [string, DialectMigration][] = [
  ['0001-initial', initial],
  ['0002-history-releases-outbox', history],
  ['0003-template-body', body],
  ['0004-body-follows-columns', bodyFollows],
  ['0005-account-usage', accountUsage],
  ['0006-rate-buckets', rateBuckets],
  ['0007-registry-auths', registryAuths],
  ['0008-notify-changes', notifyChanges],
  ['0009-housekeeping', housekeeping],
  ['0010-search', search],
  ['0011-secrets', secrets],
  ['0012-history-quota', historyQuota],
  ['0013-filter-indexes', filterIndexes],
  ['0014-usage-per-statement', usagePerStatement],
  ['0015-search-follows-columns', searchFollows],
  ['0016-search-final-sigma', finalSigma],
  ['0017-template-values-checked', valuesChecked],
  ['0018-changes-told-to-the-writer', changesTold],
  ['0019-storage-per-account', storagePerAccount],
  ['0020-registry-auths-of-their-owner', authsOfOwner],
  ['0021-names-compared-folded', namesFolded],
  ['0022-image-checks', imageChecks],
];

export function migrations(dialect: SqlDialect): Record<string, Migration> {
  return Object.fromEntries(ordered.map(([name, m]) => [name, { up: (db: Kysely<unknown>) => m.up(db, dialect) }]));
}
