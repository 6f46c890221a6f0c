import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { ENV_MASK } from '../domain/token-formats.ts';
import { collect, integerFlag, type OutputFlags, readStdin, UsageError } from './command.ts';

// The flags and files that set a template's fields, for templates create and update.

export interface FieldFlags extends OutputFlags {
  file?: string;
  name?: string;
  image?: string;
  containerDisk?: string;
  volume?: string;
  volumeMountPath?: string;
  registryAuth?: string;
  env?: string[];
  port?: string[];
  entrypoint?: string[];
  cmd?: string[];
  readme?: string;
  readmeFile?: string;
  public?: boolean;
  private?: boolean;
}

/** The flags that set a template's fields; create has them all, update all but the immutable ones. */
export function fieldOptions(command: Command, update: boolean): Command {
  const merge = update ? ' (added to the current ones; see --replace-env)' : '; repeat for more';
  return command
    .option('-f, --file <path>', 'the fields from a JSON or YAML file (- for stdin); flags override it')
    .option('--name <name>', 'the name, unique among your templates')
    .option('--image <ref>', 'the image reference, e.g. runpod/pytorch:2.2.0')
    .option('--container-disk <GB>', 'container disk size')
    .option('--volume <GB>', 'volume size (0 for none)')
    .option('--volume-mount-path <path>', 'where the volume is mounted')
    .option('--registry-auth <id>', 'one of your registry auths, to pull a private image (podplate registry-auth list); "" for none')
    .option('-e, --env <KEY=VALUE>', `an environment variable${merge}`, collect)
    .option(
      '-p, --port <port/proto>',
      `an exposed port, <1-65535>/<http|tcp>${update ? ' (added to the current ones; see --replace-ports)' : '; repeat for more'}`,
      collect,
    )
    .option('--entrypoint <word>', 'one word of the entrypoint; repeat for each word (replaces the entrypoint)', collect)
    .option('--cmd <word>', 'one word of the start command; repeat for each word (replaces the command)', collect)
    .option('--readme <markdown>', 'the readme')
    .option('--readme-file <path>', 'the readme, from a file')
    .option('--public', 'anyone can use the template')
    .option('--private', 'only you can use the template');
}

async function readTemplateFile(path: string): Promise<Record<string, unknown>> {
  const shown = path === '-' ? 'stdin (-f -)' : path;
  let text: string;
  try {
    text = path === '-' ? await readStdin() : readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${shown}: ${(error as Error).message}`);
  }
  if (path === '-' && text.trim() === '')
    throw new UsageError(
      `${shown} is empty: pipe a template into it, e.g. podplate templates get <id> -o yaml | podplate templates create -f -`,
    );
  let value: unknown;
  try {
    value = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new UsageError(`${shown} is not valid ${extname(path).toLowerCase() === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  if (Array.isArray(value))
    throw new UsageError(`${shown} holds a list: it takes one template, as templates get <id> -o json|yaml prints it`);
  if (typeof value !== 'object' || value === null) throw new UsageError(`${shown} must hold one template: an object of its fields`);
  // What get printed without --show-values: its dots would become the values.
  const env = (value as { env?: unknown }).env;
  const masked = env && typeof env === 'object' ? Object.keys(env).filter((k) => (env as Record<string, unknown>)[k] === ENV_MASK) : [];
  if (masked.length > 0)
    throw new UsageError(
      `${shown}: env ${masked.join(', ')} ${masked.length === 1 ? 'holds a masked value' : 'hold masked values'} (${ENV_MASK}): ` +
        'print the template with --show-values to copy its values',
    );
  return value as Record<string, unknown>;
}

function envOf(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    // The argument is not echoed: with its "KEY=" forgotten, it is a value, maybe a token, and this line may be a CI log.
    if (at <= 0) throw new UsageError(`--env takes KEY=VALUE (the argument given has no "=" after a name)`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

function portsOf(ports: string[]): string[] {
  for (const port of ports)
    if (!/^[0-9]+\/[A-Za-z]+$/.test(port))
      throw new UsageError(`--port takes <port>/<http|tcp>, e.g. 8888/http, not ${JSON.stringify(port)}`);
  return ports;
}

/** The fields given by -f and the flags (flags win); absent flags leave fields absent. */
export async function fieldsFrom(flags: FieldFlags): Promise<Record<string, unknown>> {
  if (flags.public && flags.private) throw new UsageError('--public and --private exclude each other');
  if (flags.readme !== undefined && flags.readmeFile !== undefined) throw new UsageError('give --readme or --readme-file, not both');
  let readme = flags.readme;
  if (flags.readmeFile !== undefined) {
    try {
      readme = readFileSync(flags.readmeFile, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${flags.readmeFile}: ${(error as Error).message}`);
    }
  }
  const given: Record<string, unknown> = {
    name: flags.name,
    imageName: flags.image,
    containerDiskInGb: integerFlag('container-disk', flags.containerDisk),
    volumeInGb: integerFlag('volume', flags.volume),
    volumeMountPath: flags.volumeMountPath,
    containerRegistryAuthId: flags.registryAuth,
    env: flags.env && envOf(flags.env),
    ports: flags.port && portsOf(flags.port),
    dockerEntrypoint: flags.entrypoint,
    dockerStartCmd: flags.cmd,
    readme,
    isPublic: flags.public ? true : flags.private ? false : undefined,
  };
  const file = flags.file !== undefined ? await readTemplateFile(flags.file) : {};
  return { ...file, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
}
