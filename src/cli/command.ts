import { createInterface } from 'node:readline/promises';
import { text } from 'node:stream/consumers';
import { type Command, Option } from 'commander';
import { Document, isScalar, Scalar, visit } from 'yaml';
import { type Column, escapeUnsafe, note, out, printJson, table, withoutValues } from './output.ts';

// What every client command shares: the output flags and how a list or one resource is printed, usage errors,
// confirmations, and the small parsers of flag values.

/** A mistake in how the command was called: exit 2, with the command's usage hint. */
export class UsageError extends Error {}

/**
 * All of stdin, as text, read as a stream: a pipe whose writer is slower than this command (`vault read … | podplate
 * secrets set`) is waited for. Reading file descriptor 0 at once failed there with EAGAIN, once Node had made it
 * non-blocking.
 */
export const readStdin = (): Promise<string> => text(process.stdin);

export type Format = 'table' | 'wide' | 'json' | 'yaml';

export interface OutputFlags {
  output?: Format;
  json?: boolean;
  quiet?: boolean;
  headers?: boolean;
  /** Print env values in full; otherwise every format masks them (output.ts, `withoutValues`). */
  showValues?: boolean;
}

/** Adds -o/--output (and --json); for lists also -q/--quiet and --no-headers. */
export function withOutput(command: Command, list = false): Command {
  command.addOption(
    new Option('-o, --output <format>', 'table (default), wide (every column), json or yaml').choices(['table', 'wide', 'json', 'yaml']),
  );
  command.option('--json', "the same as -o json: the API's JSON");
  if (list) command.option('-q, --quiet', 'print only the ids, one a line').option('--no-headers', 'print tables without their header row');
  return command;
}

/** --show-values, for a command that prints templates, revisions or releases. */
export const showValues = () => new Option('--show-values', 'print env values in full (every format masks them, secret references aside)');

export const formatOf = (flags: OutputFlags): Format => (flags.json ? 'json' : (flags.output ?? 'table'));
/** Whether the flags ask for data (JSON or YAML) rather than text for people. */
export const printsData = (flags: OutputFlags) => formatOf(flags) === 'json' || formatOf(flags) === 'yaml';

/**
 * YAML whose strings holding an unsafe character (output.ts) are double-quoted, where `\uXXXX` is an escape: every
 * such character is then written as one, and the YAML reads back the same values.
 */
function safeYaml(value: unknown): string {
  const document = new Document(value);
  visit(document, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === 'string' && escapeUnsafe(node.value) !== node.value) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return escapeUnsafe(document.toString());
}

/** Prints JSON or YAML (env values masked unless --show-values) and returns true; false when the format is a table, for the caller to print its own. */
export function printData(value: unknown, flags: OutputFlags): boolean {
  const format = formatOf(flags);
  const shown = flags.showValues ? value : withoutValues(value);
  if (format === 'json') printJson(shown);
  else if (format === 'yaml') process.stdout.write(safeYaml(shown));
  else return false;
  return true;
}

export interface Shape<T> {
  columns: Column[];
  row: (item: T) => string[];
  id: (item: T) => string;
}

/** A list as the flags ask: ids, JSON, YAML, or a table fitting the terminal (every column with -o wide). */
export function printList<T>(items: T[], shape: Shape<T>, flags: OutputFlags, empty: string): void {
  if (flags.quiet) {
    if (items.length > 0) out(items.map(shape.id).join('\n'));
    return;
  }
  if (printData(items, flags)) return;
  if (items.length === 0) {
    note(empty);
    return;
  }
  out(table(shape.columns, items.map(shape.row), { wide: formatOf(flags) === 'wide', headers: flags.headers !== false }));
}

/** A whole number from a flag, or a usage error naming the flag. */
export function integerFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw new UsageError(`--${flag} must be a whole number, not ${JSON.stringify(value)}`);
  return Number(value);
}

/** An ETag as typed: `r2`, `"r2"` or `W/"r2"` alike (quotes are easy to lose in a shell). */
export function etagFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const tag = value.trim();
  if (tag === '*' || /^(W\/)?".*"$/.test(tag)) return tag;
  return `"${tag}"`;
}

/** Collects a repeated flag's values (after a `--no-…` of the same name, commander passes `false`: start again). */
export const collect = (value: string, previous?: string[] | boolean) => [...(Array.isArray(previous) ? previous : []), value];

/**
 * The options given on the command line, by name (`env`, `no-env`): commander folds `--env` and `--no-env` into one
 * value, so whether both were given is only seen as they are parsed.
 */
export function givenOptions(command: Command): Set<string> {
  const given = new Set<string>();
  for (const option of command.options) command.on(`option:${option.name()}`, () => given.add(option.name()));
  return given;
}

/**
 * A delete goes ahead with --yes; without it, a terminal is asked, and anything else refused (a script must say
 * --yes, so that a pipeline can't delete by accident).
 */
export async function confirm(yes: boolean | undefined, what: string, verb = 'delete'): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw new UsageError(`add --yes to ${verb} ${what} (stdin is not a terminal to ask)`);
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${verb[0]?.toUpperCase()}${verb.slice(1)} ${what}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}

/** Reads a line from the terminal without echoing it (for secrets). */
export function hiddenInput(question: string): Promise<string> {
  const input = process.stdin;
  return new Promise((resolve, reject) => {
    let text = '';
    process.stderr.write(question);
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === '\r' || c === '\n' || c === '\u0004') return done();
        if (c === '\u0003') return done(new UsageError('cancelled'));
        if (c === '\u007f' || c === '\b') text = text.slice(0, -1);
        else if (c >= ' ') text += c;
      }
    };
    input.on('data', onData);
  });
}
