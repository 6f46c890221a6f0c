import { type ParseArgsConfig, parseArgs } from 'node:util';

// Each client command declares its flags once: the parser, the usage text and the --help example come from it.

type Options = NonNullable<ParseArgsConfig['options']>;

/** A mistake in how the command was called: exit 2 with the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}

export interface CommandSpec<O extends Options> {
  /** e.g. `templates get` */
  name: string;
  /** Positional arguments as shown in the usage: `<id>` is required, `[id]` optional (after the required ones). */
  args?: string[];
  summary: string;
  options: O;
  /** Flag → help text, in the order shown. */
  help: Record<string, string>;
  examples: string[];
}

const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A command's spec, with its flags' types kept literal so the parsed values are typed. */
export const defineCommand = <const O extends Options>(spec: CommandSpec<O>): CommandSpec<O> => spec;

export function usageOf<O extends Options>(spec: CommandSpec<O>): string {
  const args = (spec.args ?? []).join(' ');
  const flags = ' [flags]';
  const lines = [`Usage: podplate ${spec.name}${args ? ` ${args}` : ''}${flags}`, '', spec.summary, ''];
  const entries = [...Object.entries(spec.help), ['-h, --help', 'show this help']];
  const width = Math.max(...entries.map(([flag]) => (flag as string).length));
  lines.push('Flags:', ...entries.map(([flag, text]) => `  ${(flag as string).padEnd(width)}  ${text}`), '');
  lines.push('Examples:', ...spec.examples.map((e) => `  ${e}`), '');
  return lines.join('\n');
}

type Value<T> = T extends { type: 'boolean' }
  ? T extends { multiple: true }
    ? boolean[]
    : boolean
  : T extends { multiple: true }
    ? string[]
    : string;
export interface Parsed<O extends Options> {
  values: { [K in keyof O]?: Value<O[K]> } & { json?: boolean; help?: boolean };
  positionals: string[];
}

/** Parses `argv` for `spec`, or throws a UsageError carrying the command's usage. `undefined` means --help was printed. */
export function parseCommand<O extends Options>(spec: CommandSpec<O>, argv: string[]): Parsed<O> | undefined {
  const usage = usageOf(spec);
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...spec.options, ...COMMON_OPTIONS },
      allowPositionals: true,
      strict: true,
    }) as unknown as Parsed<O>;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
  if (parsed.values.help) {
    process.stdout.write(usage);
    return undefined;
  }
  const expected = spec.args ?? [];
  const required = expected.filter((a) => !a.startsWith('[')).length;
  if (parsed.positionals.length < required) throw new UsageError(`missing ${expected[parsed.positionals.length]}`, usage);
  if (parsed.positionals.length > expected.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[expected.length])}`, usage);
  return parsed;
}

/** A whole number from a flag, or a usage error naming the flag. */
export function integerFlag(flag: string, value: string | undefined, usage?: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw new UsageError(`--${flag} must be a whole number, not ${JSON.stringify(value)}`, usage);
  return Number(value);
}
