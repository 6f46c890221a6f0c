// What a change names: one template, one API key, every key of an account, or everything. The database's triggers
// write these names (migration 0018 generates them from CHANGE_SOURCES) and the read cache reads them: both here.

export type Change =
  | { kind: 'template'; id: string }
  | { kind: 'key'; digest: string }
  | { kind: 'account'; id: string }
  | { kind: 'everything' };

const PREFIX = { template: 't:', key: 'k:', account: 'a:' } as const satisfies Record<Exclude<Change['kind'], 'everything'>, string>;

/** The name of a change to everything (a truncate, or more changes than a reader can keep apart). */
export const EVERYTHING = '*';

/** The tables whose rows are cached: an update or delete of a row names its change by the old row's column. */
export const CHANGE_SOURCES = [
  { table: 'templates', kind: 'template', column: 'id' },
  { table: 'api_keys', kind: 'key', column: 'digest' },
  { table: 'accounts', kind: 'account', column: 'id' },
] as const satisfies readonly { table: string; kind: keyof typeof PREFIX; column: string }[];

export type ChangeSource = (typeof CHANGE_SOURCES)[number];

/** The SQL expression, in a row trigger, that names the change of `source`'s old row. */
const changeNameSql = (source: ChangeSource): string => `'${PREFIX[source.kind]}' || old.${source.column}`;

/** PostgreSQL: the transaction's own setting that its triggers add each change's name to (see `changeTriggers`). */
export const WRITTEN_SETTING = 'podplate.written';

/**
 * The statements that make (or make again: each replaces what it makes) the triggers naming every change of
 * CHANGE_SOURCES. PostgreSQL: a NOTIFY on the schema's channel for the other processes, and the name added to the
 * transaction's setting WRITTEN_SETTING, which the store reads before it commits so that the writing process forgets
 * what it changed at once (past 16 KiB of names, a transaction's changes are told as everything). SQLite: a row of
 * `cache_changes`, which every process (the writer after its own commit) reads.
 */
export function changeTriggers(dialect: 'sqlite' | 'postgres'): string[] {
  if (dialect === 'sqlite') {
    return CHANGE_SOURCES.flatMap((source) =>
      ['update', 'delete'].flatMap((event) => [
        `drop trigger if exists ${source.table}_${event}_change`,
        `create trigger ${source.table}_${event}_change after ${event} on ${source.table}
for each row begin insert into cache_changes (name) values (${changeNameSql(source)}); end`,
      ]),
    );
  }
  const told = (name: string) => `perform pg_notify('podplate_' || md5(tg_table_schema), ${name});
  perform podplate_written(${name});`;
  return [
    `create or replace function podplate_written(name text) returns void language plpgsql as $$
declare
  written text := coalesce(current_setting('${WRITTEN_SETTING}', true), '');
begin
  if written = '${EVERYTHING}' then return; end if;
  if name = '${EVERYTHING}' or length(written) > 16384 then written := '${EVERYTHING}'; else written := written || name || ' '; end if;
  perform set_config('${WRITTEN_SETTING}', written, true);
end $$`,
    `create or replace function podplate_notify_flush() returns trigger language plpgsql as $$
begin
  ${told(`'${EVERYTHING}'`)}
  return null;
end $$`,
    ...CHANGE_SOURCES.map(
      (source) => `create or replace function ${source.table}_notify_change() returns trigger language plpgsql as $$
begin
  ${told(changeNameSql(source))}
  return null;
end $$`,
    ),
  ];
}

/** The change a name stands for; a name this version does not know stands for everything. */
export function parseChange(name: string): Change {
  const value = name.slice(2);
  if (name.startsWith(PREFIX.template)) return { kind: 'template', id: value };
  if (name.startsWith(PREFIX.key)) return { kind: 'key', digest: value };
  if (name.startsWith(PREFIX.account)) return { kind: 'account', id: value };
  return { kind: 'everything' };
}
