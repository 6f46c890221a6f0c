import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import * as initial from './0001-initial.ts';
import * as history from './0002-history-releases-outbox.ts';
import * as body from './0003-template-body.ts';
import * as bodyFollows from './0004-body-follows-columns.ts';
import * as accountUsage from './0005-account-usage.ts';
import * as rateBuckets from './0006-rate-buckets.ts';
import * as registryAuths from './0007-registry-auths.ts';
import * as secrets from './0011-secrets.ts';

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
  ['0011-secrets', secrets],
];

export function migrations(dialect: SqlDialect): Record<string, Migration> {
  return Object.fromEntries(ordered.map(([name, m]) => [name, { up: (db: Kysely<unknown>) => m.up(db, dialect) }]));
}
