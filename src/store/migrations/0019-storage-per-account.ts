import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Everything an account's requests make the database keep is counted against it (docs/reliability.md, "Bounds").
// Besides its templates (migrations 0005, 0014), their history, kept by triggers in account_usage.history_bytes:
// each revision's snapshot and diff, each release's diff, each outbox event's payload (cleared once delivered); and
// the responses kept for its Idempotency-Keys, by count. The outbox names the account an event is for (delivery
// takes accounts in turn, and the count follows it). What describes a template or endpoint deleted before this
// migration goes: releases of deleted templates, and events of deleted endpoints or releases.
//
// A row's bytes are taken from its owner while the owner is there: deleting a template (an endpoint) takes its
// revisions' (releases') bytes just before the row goes; the rows its foreign keys then delete find no owner. As in
// migration 0014, PostgreSQL counts once per statement (an import writes a million revisions in one transaction),
// summed by account and in its order; SQLite counts row by row.

const revisionBytes = (row: string) => `octet_length(${row}.snapshot) + octet_length(${row}.diff)`;

/** Adds to each account's `column` what `source` (an SQL select of account_id, amount) sums to, in account order. */
const add = (column: string, source: string) => `insert into account_usage as u (account_id, ${column})
    select account_id, sum(amount) from (${source}) change where account_id is not null group by account_id having sum(amount) <> 0
    order by account_id
    on conflict (account_id) do update set ${column} = u.${column} + excluded.${column}`;

/** What a table's rows add to which column of their account's usage: `amount` of each row, for the account it names. */
interface Counted {
  table: string;
  column: 'history_bytes' | 'stored_responses';
  amount: (row: string) => string;
  /** The row's account: a column of its own, or the owner of the row its key names in another table. */
  account: { column: string } | { owner: 'templates' | 'endpoints'; key: string };
  /** Also after an update of this column (the rows before taken away, after added). */
  updateOf?: string;
}

const COUNTED: Counted[] = [
  { table: 'template_revisions', column: 'history_bytes', amount: revisionBytes, account: { owner: 'templates', key: 'template_id' } },
  {
    table: 'releases',
    column: 'history_bytes',
    amount: (row) => `octet_length(${row}.diff)`,
    account: { owner: 'endpoints', key: 'endpoint_id' },
  },
  {
    table: 'outbox',
    column: 'history_bytes',
    amount: (row) => `octet_length(${row}.payload)`,
    account: { column: 'account_id' },
    updateOf: 'payload',
  },
  { table: 'idempotency_keys', column: 'stored_responses', amount: () => '1', account: { column: 'account_id' } },
];

/** A select of (account_id, amount) over the rows of `rows` (a table, or a statement's transition table), times `sign`. */
function amounts(c: Counted, rows: string, sign: '' | '-'): string {
  if ('column' in c.account) return `select ${rows}.${c.account.column} as account_id, ${sign}(${c.amount(rows)}) as amount from ${rows}`;
  const { owner, key } = c.account;
  return `select o.owner_id as account_id, ${sign}(${c.amount(rows)}) as amount from ${rows} join ${owner} o on o.id = ${rows}.${key}`;
}

/** The same for the one row of a SQLite row trigger (`new` or `old`). */
function rowAmount(c: Counted, row: 'new' | 'old', sign: '' | '-'): string {
  if ('column' in c.account) return `select ${row}.${c.account.column} as account_id, ${sign}(${c.amount(row)}) as amount`;
  const { owner, key } = c.account;
  return `select o.owner_id as account_id, ${sign}(${c.amount(row)}) as amount from ${owner} o where o.id = ${row}.${key}`;
}

/** Before an owner goes: what its children (revisions of a template, releases of an endpoint) held is taken away. */
const OWNERS = [
  { table: 'templates', children: `select coalesce(sum(${revisionBytes('r')}), 0) from template_revisions r where r.template_id = old.id` },
  { table: 'endpoints', children: 'select coalesce(sum(octet_length(r.diff)), 0) from releases r where r.endpoint_id = old.id' },
];

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  for (const c of COUNTED) {
    const name = `${c.column}_of_${c.table}`;
    await sql
      .raw(`create function ${name}() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    ${add(c.column, amounts(c, 'added', ''))};
  elsif tg_op = 'DELETE' then
    ${add(c.column, amounts(c, 'removed', '-'))};
  else
    ${add(c.column, `${amounts(c, 'added', '')} union all ${amounts(c, 'removed', '-')}`)};
  end if;
  return null;
end $$`)
      .execute(db);
    await sql
      .raw(
        `create trigger ${name}_insert after insert on ${c.table} referencing new table as added for each statement execute function ${name}()`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${name}_delete after delete on ${c.table} referencing old table as removed for each statement execute function ${name}()`,
      )
      .execute(db);
    if (c.updateOf) {
      await sql
        .raw(`create trigger ${name}_update after update on ${c.table}
          referencing old table as removed new table as added for each statement execute function ${name}()`)
        .execute(db);
    }
  }
  for (const o of OWNERS) {
    await sql
      .raw(`create function history_of_${o.table}_before_delete() returns trigger language plpgsql as $$
begin
  ${add('history_bytes', `select old.owner_id as account_id, -(${o.children}) as amount`)};
  return old;
end $$`)
      .execute(db);
    await sql
      .raw(
        `create trigger history_of_${o.table}_before_delete before delete on ${o.table} for each row execute function history_of_${o.table}_before_delete()`,
      )
      .execute(db);
  }
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const c of COUNTED) {
    const name = `${c.column}_of_${c.table}`;
    await sql
      .raw(`create trigger ${name}_insert after insert on ${c.table} begin ${add(c.column, rowAmount(c, 'new', ''))}; end`)
      .execute(db);
    await sql
      .raw(`create trigger ${name}_delete after delete on ${c.table} begin ${add(c.column, rowAmount(c, 'old', '-'))}; end`)
      .execute(db);
    if (c.updateOf) {
      await sql
        .raw(`create trigger ${name}_update after update of ${c.updateOf} on ${c.table} begin
  ${add(c.column, `${rowAmount(c, 'new', '')} union all ${rowAmount(c, 'old', '-')}`)};
end`)
        .execute(db);
    }
  }
  for (const o of OWNERS) {
    await sql
      .raw(`create trigger history_of_${o.table}_before_delete before delete on ${o.table} begin
  ${add('history_bytes', `select old.owner_id as account_id, -(${o.children}) as amount`)};
end`)
      .execute(db);
  }
}

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .alterTable('account_usage')
    .addColumn('history_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('account_usage')
    .addColumn('stored_responses', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('outbox').addColumn('account_id', 'text').execute();
  // A kept response to a template write names the template at its revision (and its body's digest), not the body.
  await db.schema.alterTable('idempotency_keys').addColumn('answer', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('body_digest', 'text').execute();

  // What describes what was deleted before: its events and releases go.
  await sql`delete from outbox where ordering_key not in (select id from endpoints)`.execute(db);
  await sql`delete from outbox where subject_id not in (select id from releases)`.execute(db);
  await sql`delete from releases where template_id not in (select id from templates)`.execute(db);
  await sql`update outbox set account_id = (select owner_id from endpoints where endpoints.id = outbox.ordering_key)`.execute(db);
  // Delivered events keep no payload (the deliverer clears it from now on).
  await sql`update outbox set payload = '' where delivered_at is not null and payload <> ''`.execute(db);
  // /metrics counts the failing events down an index of their own, reading no row (the pending: outbox_pending).
  await sql`create index outbox_failing on outbox (seq) where delivered_at is null and last_error is not null`.execute(db);
  // A template's releases go with it; the releases that moved an endpoint away from it forget its values.
  await sql`create index releases_template on releases (template_id)`.execute(db);
  await db.schema.alterTable('releases').addColumn('previous_template_id', 'text').execute();
  await sql`create index releases_previous_template on releases (previous_template_id) where previous_template_id is not null`.execute(db);
  // Delivery takes accounts in turn: the undelivered events of each account, oldest first.
  await sql`create index outbox_pending_account on outbox (account_id, seq) where delivered_at is null`.execute(db);

  if (dialect.name === 'postgres') await postgresTriggers(db);
  else await sqliteTriggers(db);

  // What accounts held before: counted once, by the same selects the triggers use.
  for (const c of COUNTED) await sql.raw(add(c.column, amounts(c, c.table, ''))).execute(db);
}
