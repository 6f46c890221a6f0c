import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { type Template, type TemplateCreate, type TemplateListQuery, type TemplateUpdate, toArray } from '../client/index.ts';
import { defineCommand, integerFlag, type Parsed, parseCommand, UsageError, usageOf } from './args.ts';
import { client } from './config.ts';
import { note, out, printJson, revisionTable, templateDetails, templateTable } from './output.ts';

// podplate templates list|get|create|update|delete|revisions|rollback

const CATEGORIES = ['NVIDIA', 'AMD', 'CPU'];

const listSpec = defineCommand({
  name: 'templates list',
  summary: 'List the templates you can see, newest first: your own, and with flags public, official and bound ones.',
  options: {
    public: { type: 'boolean' },
    platform: { type: 'boolean' },
    bound: { type: 'boolean' },
    category: { type: 'string' },
    serverless: { type: 'boolean' },
    pods: { type: 'boolean' },
    search: { type: 'string', short: 'q' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
  },
  help: {
    '--public': "include other accounts' public templates",
    '--platform': 'include official platform templates',
    '--bound': 'include templates bound to Serverless endpoints',
    '--category <NVIDIA|AMD|CPU>': 'only this category',
    '--serverless | --pods': 'only Serverless templates, or only Pod templates',
    '-q, --search <text>': 'only templates whose name or image contains the text (ignoring case)',
    '--limit <n>': 'templates per page (default 100, at most 1000)',
    '--all': 'follow the Link header through every page (default: the first page only)',
    '--json': "print the API's JSON: an array of every template fetched",
  },
  examples: ['podplate templates list', 'podplate templates list --public --platform --category NVIDIA --search pytorch --all --json'],
});

async function list(argv: string[]): Promise<number> {
  const parsed = parseCommand(listSpec, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const usage = usageOf(listSpec);
  const category = values.category?.toUpperCase();
  if (category !== undefined && !CATEGORIES.includes(category))
    throw new UsageError(`--category is one of ${CATEGORIES.join(', ')}, not ${JSON.stringify(values.category)}`, usage);
  if (values.serverless && values.pods) throw new UsageError('--serverless and --pods exclude each other', usage);
  const query: TemplateListQuery = {
    ...(values.public ? { includePublicTemplates: true } : {}),
    ...(values.platform ? { includePlatformTemplates: true } : {}),
    ...(values.bound ? { includeEndpointBoundTemplates: true } : {}),
    ...(category ? { category: category as TemplateListQuery['category'] } : {}),
    ...(values.serverless ? { isServerless: true } : values.pods ? { isServerless: false } : {}),
    ...(values.search !== undefined ? { q: values.search } : {}),
    ...(values.limit !== undefined ? { limit: integerFlag('limit', values.limit, usage) } : {}),
  };
  const podplate = client();
  let templates: Template[];
  let more = false;
  if (values.all) templates = await toArray(podplate.listTemplates(query));
  else {
    const page = await podplate.listTemplatesPage(query);
    templates = page.items;
    more = page.next !== undefined;
  }
  if (values.json) printJson(templates);
  else if (templates.length === 0) note('No templates.');
  else out(templateTable(templates));
  if (more && !values.json) note('More templates follow: add --all to list every page.');
  return 0;
}

const getSpec = defineCommand({
  name: 'templates get',
  args: ['<template-id>'],
  summary:
    'Show a template: yours, or any public, official or bound one you can see. Env values are masked (secret references ' +
    'are shown) unless --show-values is given.',
  options: { 'show-values': { type: 'boolean' } },
  help: { '--show-values': 'print env values in full', '--json': "print the API's JSON (values as the API sent them)" },
  examples: [
    'podplate templates get 5x2k9d0v7m3qh8wz',
    'podplate templates get 5x2k9d0v7m3qh8wz --show-values',
    'podplate templates get 5x2k9d0v7m3qh8wz --json | jq -r .imageName',
  ],
});

async function get(argv: string[]): Promise<number> {
  const parsed = parseCommand(getSpec, argv);
  if (!parsed) return 0;
  const everything = { includePublicTemplates: true, includePlatformTemplates: true, includeEndpointBoundTemplates: true };
  const { value, etag } = await client().getTemplate(parsed.positionals[0] as string, everything);
  if (parsed.values.json) printJson(value);
  else out(templateDetails(value, etag, parsed.values['show-values']));
  return 0;
}

/** The flags that set a template's fields; create has them all, update all but the immutable ones. */
const fieldOptions = {
  file: { type: 'string', short: 'f' },
  name: { type: 'string' },
  image: { type: 'string' },
  'container-disk': { type: 'string' },
  volume: { type: 'string' },
  'volume-mount-path': { type: 'string' },
  'registry-auth': { type: 'string' },
  env: { type: 'string', multiple: true, short: 'e' },
  port: { type: 'string', multiple: true, short: 'p' },
  entrypoint: { type: 'string', multiple: true },
  cmd: { type: 'string', multiple: true },
  readme: { type: 'string' },
  'readme-file': { type: 'string' },
  public: { type: 'boolean' },
  private: { type: 'boolean' },
} as const;

const fieldHelp = {
  '-f, --file <path>': 'the fields from a JSON or YAML file (- for stdin); flags override it',
  '--name <name>': 'the name, unique among your templates',
  '--image <ref>': 'the image reference, e.g. runpod/pytorch:2.2.0',
  '--container-disk <GB>': 'container disk size',
  '--volume <GB>': 'volume size (0 for none)',
  '--volume-mount-path <path>': 'where the volume is mounted',
  '--registry-auth <id>': 'one of your registry auths, to pull a private image (podplate registry-auth list); "" for none',
  '-e, --env KEY=VALUE': 'an environment variable; repeat for more',
  '-p, --port <port>/<http|tcp>': 'an exposed port; repeat for more',
  '--entrypoint <word>': 'one word of the entrypoint; repeat for each word',
  '--cmd <word>': 'one word of the start command; repeat for each word',
  '--readme <markdown> | --readme-file <path>': 'the readme',
  '--public | --private': 'who can use the template',
};

type FieldValues = Parsed<typeof fieldOptions>['values'];

function readTemplateFile(path: string, usage: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`, usage);
  }
  let value: unknown;
  try {
    value = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new UsageError(
      `${path} is not valid ${extname(path).toLowerCase() === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
      usage,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${path} must hold one template: an object of its fields`, usage);
  return value as Record<string, unknown>;
}

function envOf(pairs: string[], usage: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--env takes KEY=VALUE, not ${JSON.stringify(pair)}`, usage);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

function portsOf(ports: string[], usage: string): string[] {
  for (const port of ports)
    if (!/^[0-9]+\/[A-Za-z]+$/.test(port))
      throw new UsageError(`--port takes <port>/<http|tcp>, e.g. 8888/http, not ${JSON.stringify(port)}`, usage);
  return ports;
}

/** The fields given by -f and the flags (flags win); absent flags leave fields absent. */
function fieldsFrom(values: FieldValues, usage: string): Record<string, unknown> {
  if (values.public && values.private) throw new UsageError('--public and --private exclude each other', usage);
  if (values.readme !== undefined && values['readme-file'] !== undefined)
    throw new UsageError('give --readme or --readme-file, not both', usage);
  const readmeFile = values['readme-file'];
  let readme = values.readme;
  if (readmeFile !== undefined) {
    try {
      readme = readFileSync(readmeFile, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${readmeFile}: ${(error as Error).message}`, usage);
    }
  }
  const given: Record<string, unknown> = {
    name: values.name,
    imageName: values.image,
    containerDiskInGb: integerFlag('container-disk', values['container-disk'], usage),
    volumeInGb: integerFlag('volume', values.volume, usage),
    volumeMountPath: values['volume-mount-path'],
    containerRegistryAuthId: values['registry-auth'],
    env: values.env && envOf(values.env, usage),
    ports: values.port && portsOf(values.port, usage),
    dockerEntrypoint: values.entrypoint,
    dockerStartCmd: values.cmd,
    readme,
    isPublic: values.public ? true : values.private ? false : undefined,
  };
  const file = values.file !== undefined ? readTemplateFile(values.file, usage) : {};
  return { ...file, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
}

const createSpec = defineCommand({
  name: 'templates create',
  summary: 'Create a template. --name and --image are required (by flag or file); every other field has a default.',
  options: { ...fieldOptions, category: { type: 'string' }, serverless: { type: 'boolean' }, 'idempotency-key': { type: 'string' } },
  help: {
    ...fieldHelp,
    '--category <NVIDIA|AMD|CPU>': 'compute category (default NVIDIA; fixed once created)',
    '--serverless': 'a Serverless template (fixed once created)',
    '--idempotency-key <key>': 'retry safely: a repeat with the same key creates nothing new',
    '--json': "print the API's JSON",
  },
  examples: [
    'podplate templates create --name notebook --image runpod/pytorch:2.2.0 --port 8888/http --port 22/tcp -e JUPYTER_PASSWORD=secret',
    'podplate templates create -f template.yaml --name "notebook (copy)"',
  ],
});

async function create(argv: string[]): Promise<number> {
  const parsed = parseCommand(createSpec, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const usage = usageOf(createSpec);
  const body = fieldsFrom(values, usage);
  if (values.category !== undefined) body.category = values.category.toUpperCase();
  if (values.serverless) body.isServerless = true;
  if (body.name === undefined || body.imageName === undefined)
    throw new UsageError(`a template needs ${body.name === undefined ? '--name' : '--image'} (or the field in -f)`, usage);
  const { value, etag } = await client().createTemplate(body as TemplateCreate, { idempotencyKey: values['idempotency-key'] });
  if (values.json) printJson(value);
  else out(`Created template ${value.id}.\n\n${templateDetails(value, etag)}`);
  return 0;
}

const updateSpec = defineCommand({
  name: 'templates update',
  args: ['<template-id>'],
  summary:
    'Change a template: only the fields given change. --env, --port, --entrypoint and --cmd replace the whole map or list; ' +
    'a change makes a new revision and starts a release on the bound endpoint.',
  options: {
    ...fieldOptions,
    'no-env': { type: 'boolean' },
    'no-ports': { type: 'boolean' },
    'no-entrypoint': { type: 'boolean' },
    'no-cmd': { type: 'boolean' },
    'if-match': { type: 'string' },
  },
  help: {
    ...fieldHelp,
    '--no-env | --no-ports': 'clear the environment, or the ports',
    '--no-entrypoint | --no-cmd': "back to the image's own entrypoint, or start command",
    '--if-match <etag>': 'only if the template is still at this ETag (e.g. "r3"); 412 otherwise',
    '--json': "print the API's JSON",
  },
  examples: [
    'podplate templates update 5x2k9d0v7m3qh8wz --image runpod/pytorch:2.2.0',
    `podplate templates update 5x2k9d0v7m3qh8wz -f changes.yaml --if-match '"r3"'`,
  ],
});

function printWrite(verb: string, value: Template, etag: string, json: boolean | undefined): void {
  if (json) printJson(value);
  else out(`${verb} template ${value.id}: revision ${value.revision}, ETag ${etag}.\n\n${templateDetails(value, etag)}`);
}

async function update(argv: string[]): Promise<number> {
  const parsed = parseCommand(updateSpec, argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const usage = usageOf(updateSpec);
  const body = fieldsFrom(values, usage);
  const clears = [
    ['no-env', 'env', 'env', {}],
    ['no-ports', 'port', 'ports', []],
    ['no-entrypoint', 'entrypoint', 'dockerEntrypoint', []],
    ['no-cmd', 'cmd', 'dockerStartCmd', []],
  ] as const;
  for (const [flag, setter, field, empty] of clears) {
    if (!values[flag]) continue;
    if (values[setter] !== undefined) throw new UsageError(`--${flag} and --${setter} exclude each other`, usage);
    body[field] = empty;
  }
  if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one field flag or -f', usage);
  const { value, etag } = await client().updateTemplate(positionals[0] as string, body as TemplateUpdate, { ifMatch: values['if-match'] });
  printWrite('Updated', value, etag, values.json);
  return 0;
}

const deleteSpec = defineCommand({
  name: 'templates delete',
  args: ['<template-id>'],
  summary: 'Delete a template with its revisions. A template bound to an endpoint cannot be deleted.',
  options: { 'if-match': { type: 'string' } },
  help: {
    '--if-match <etag>': 'only if the template is still at this ETag; 412 otherwise',
    '--json': 'print nothing (the API answers 204)',
  },
  examples: ['podplate templates delete 5x2k9d0v7m3qh8wz'],
});

async function remove(argv: string[]): Promise<number> {
  const parsed = parseCommand(deleteSpec, argv);
  if (!parsed) return 0;
  const id = parsed.positionals[0] as string;
  await client().deleteTemplate(id, { ifMatch: parsed.values['if-match'] });
  if (!parsed.values.json) note(`Deleted template ${id}.`);
  return 0;
}

const revisionsSpec = defineCommand({
  name: 'templates revisions',
  args: ['<template-id>'],
  summary:
    'List every revision of one of your templates, newest first, with what each changed. Values in a well-known token ' +
    'format are masked unless --show-values is given.',
  options: { 'show-values': { type: 'boolean' } },
  help: {
    '--show-values': 'print changed values in full',
    '--json': "print the API's JSON: every revision with its full snapshot and diff",
  },
  examples: ['podplate templates revisions 5x2k9d0v7m3qh8wz'],
});

async function revisions(argv: string[]): Promise<number> {
  const parsed = parseCommand(revisionsSpec, argv);
  if (!parsed) return 0;
  const all = await toArray(client().listRevisions(parsed.positionals[0] as string));
  if (parsed.values.json) printJson(all);
  else out(revisionTable(all, parsed.values['show-values']));
  return 0;
}

const rollbackSpec = defineCommand({
  name: 'templates rollback',
  args: ['<template-id>', '<revision>'],
  summary: "Make a new revision with an earlier revision's content, and release it like any change.",
  options: { 'if-match': { type: 'string' }, 'idempotency-key': { type: 'string' } },
  help: {
    '--if-match <etag>': 'only if the template is still at this ETag; 412 otherwise',
    '--idempotency-key <key>': 'retry safely: a repeat with the same key rolls back once',
    '--json': "print the API's JSON",
  },
  examples: ['podplate templates rollback 5x2k9d0v7m3qh8wz 3'],
});

async function rollback(argv: string[]): Promise<number> {
  const parsed = parseCommand(rollbackSpec, argv);
  if (!parsed) return 0;
  const [id, revision] = parsed.positionals as [string, string];
  const n = integerFlag('revision', revision, usageOf(rollbackSpec)) as number;
  const { value, etag } = await client().rollbackTemplate(id, n, {
    ifMatch: parsed.values['if-match'],
    idempotencyKey: parsed.values['idempotency-key'],
  });
  printWrite(`Rolled back to revision ${n}:`, value, etag, parsed.values.json);
  return 0;
}

export const templateCommands = {
  list: { spec: listSpec, run: list },
  get: { spec: getSpec, run: get },
  create: { spec: createSpec, run: create },
  update: { spec: updateSpec, run: update },
  delete: { spec: deleteSpec, run: remove },
  revisions: { spec: revisionsSpec, run: revisions },
  rollback: { spec: rollbackSpec, run: rollback },
};
