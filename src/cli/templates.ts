import type { Command } from 'commander';
import { type Template, type TemplateCreate, type TemplateListQuery, type TemplateUpdate, toArray } from '../client/index.ts';
import {
  collect,
  confirm,
  etagFlag,
  givenOptions,
  integerFlag,
  type OutputFlags,
  printData,
  printList,
  printsData,
  showValues,
  UsageError,
  withOutput,
} from './command.ts';
import { client } from './config.ts';
import { imageCheckCommands } from './image-checks.ts';
import { diffOf, diffText, note, out, revisionShape, templateDetails, templateShape } from './output.ts';
import { type FieldFlags, fieldOptions, fieldsFrom } from './template-fields.ts';

// podplate templates list|get|create|copy|update|delete|revisions|rollback|check|repin

const CATEGORIES = ['NVIDIA', 'AMD', 'CPU'];
/** The fields a user chooses: what a diff shows and a copy takes. */
const CONTENT = [
  'name',
  'imageName',
  'category',
  'isServerless',
  'isPublic',
  'containerDiskInGb',
  'volumeInGb',
  'volumeMountPath',
  'containerRegistryAuthId',
  'dockerEntrypoint',
  'dockerStartCmd',
  'env',
  'ports',
  'readme',
] as const satisfies (keyof Template)[];
/** What GET shows but the server sets: a create refuses them, so `create -f` drops them from a file GET made. */
const SERVER_SET = ['id', 'isPlatform', 'earned', 'runtimeInMin', 'revision', 'createdAt', 'updatedAt', 'ownerName', 'imageCheck'];
const EVERYTHING = { includePublicTemplates: true, includePlatformTemplates: true, includeEndpointBoundTemplates: true };

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

interface ListFlags extends OutputFlags {
  public?: boolean;
  platform?: boolean;
  bound?: boolean;
  category?: string;
  serverless?: boolean;
  pods?: boolean;
  search?: string;
  limit?: string;
  all?: boolean;
}

async function list(flags: ListFlags): Promise<void> {
  const category = flags.category?.toUpperCase();
  if (category !== undefined && !CATEGORIES.includes(category))
    throw new UsageError(`--category is one of ${CATEGORIES.join(', ')}, not ${JSON.stringify(flags.category)}`);
  if (flags.serverless && flags.pods) throw new UsageError('--serverless and --pods exclude each other');
  const query: TemplateListQuery = {
    ...(flags.public ? { includePublicTemplates: true } : {}),
    ...(flags.platform ? { includePlatformTemplates: true } : {}),
    // Your own templates don't vanish once an endpoint runs them: bound ones are listed unless --no-bound.
    ...(flags.bound !== false ? { includeEndpointBoundTemplates: true } : {}),
    ...(category ? { category: category as TemplateListQuery['category'] } : {}),
    ...(flags.serverless ? { isServerless: true } : flags.pods ? { isServerless: false } : {}),
    ...(flags.search !== undefined ? { q: flags.search } : {}),
    ...(flags.limit !== undefined ? { limit: integerFlag('limit', flags.limit) } : {}),
  };
  const podplate = client();
  let templates: Template[];
  let more = false;
  if (flags.all) templates = await toArray(podplate.listTemplates(query));
  else {
    const page = await podplate.listTemplatesPage(query);
    templates = page.items;
    more = page.next !== undefined;
  }
  printList(templates, templateShape(templates), flags, 'No templates.');
  if (more && !flags.quiet && !printsData(flags)) note('More templates follow: add --all to list every page.');
}

async function get(id: string, flags: OutputFlags & { showValues?: boolean }): Promise<void> {
  const { value, etag } = await client().getTemplate(id, EVERYTHING);
  if (!printData(value, flags)) out(templateDetails(value, etag, flags.showValues));
}

interface CreateFlags extends FieldFlags {
  category?: string;
  serverless?: boolean;
  idempotencyKey?: string;
}

async function create(flags: CreateFlags): Promise<void> {
  const body = await fieldsFrom(flags);
  const dropped = SERVER_SET.filter((field) => field in body);
  for (const field of dropped) delete body[field];
  if (dropped.length > 0) note(`Left out what the server sets: ${dropped.join(', ')}.`);
  if (flags.category !== undefined) body.category = flags.category.toUpperCase();
  if (flags.serverless) body.isServerless = true;
  if (body.name === undefined || body.imageName === undefined)
    throw new UsageError(`a template needs ${body.name === undefined ? '--name' : '--image'} (or the field in -f)`);
  const { value, etag } = await client().createTemplate(body as TemplateCreate, { idempotencyKey: flags.idempotencyKey });
  if (!printData(value, flags)) out(`Created template ${value.id}.\n\n${templateDetails(value, etag, flags.showValues)}`);
}

async function copy(id: string, flags: OutputFlags & { name?: string; public?: boolean; private?: boolean }): Promise<void> {
  if (flags.public && flags.private) throw new UsageError('--public and --private exclude each other');
  const podplate = client();
  const { value: source } = await podplate.getTemplate(id, EVERYTHING);
  const body = Object.fromEntries(CONTENT.map((field) => [field, source[field]])) as TemplateCreate;
  body.name = flags.name ?? `${source.name} (copy)`;
  body.isPublic = flags.public ? true : flags.private ? false : source.isPublic && !source.isPlatform;
  const { value, etag } = await podplate.createTemplate(body);
  if (!printData(value, flags)) out(`Copied template ${source.id} to ${value.id}.\n\n${templateDetails(value, etag, flags.showValues)}`);
}

interface UpdateFlags extends FieldFlags {
  unsetEnv?: string[];
  unsetPort?: string[];
  replaceEnv?: boolean;
  replacePorts?: boolean;
  env?: string[];
  ifMatch?: string;
}

/** Prints what a write changed, or that it changed nothing. */
function printChange(verb: string, before: Template, after: Template, etag: string, flags: OutputFlags): void {
  if (printData(after, flags)) return;
  const changes = diffOf(before, after, [...CONTENT]);
  if (after.revision === before.revision || changes.length === 0) {
    out(`No changes: template ${after.id} stays at revision ${after.revision}.`);
    return;
  }
  out(
    `${verb} template ${after.id}: revision ${before.revision} → ${after.revision}, ETag ${etag}.\n${diffText(changes, flags.showValues)}`,
  );
}

/** A clearing flag, the flag it can't be given with, and what to give instead. */
const CLEARING: [string, string, string][] = [
  ['no-env', 'env', 'give --replace-env --env KEY=VALUE to make them the whole environment'],
  ['no-ports', 'port', 'give --replace-ports --port <port/proto> to make them the only ports'],
  ['no-entrypoint', 'entrypoint', '--entrypoint alone replaces the entrypoint'],
  ['no-cmd', 'cmd', '--cmd alone replaces the start command'],
];

async function update(id: string, options: UpdateFlags, given: Set<string>): Promise<void> {
  for (const [clear, set, instead] of CLEARING)
    if (given.has(clear) && given.has(set)) throw new UsageError(`--${clear} and --${set} exclude each other: ${instead}`);
  // commander gives --no-env, --no-cmd … as the flag set to false.
  const raw = options as unknown as Record<string, unknown>;
  const flags: UpdateFlags = { ...options };
  const clears: Record<string, unknown> = {};
  if (raw.env === false) [flags.env, flags.replaceEnv] = [undefined, true];
  if (raw.ports === false) flags.replacePorts = true;
  if (raw.entrypoint === false) [flags.entrypoint, clears.dockerEntrypoint] = [undefined, []];
  if (raw.cmd === false) [flags.cmd, clears.dockerStartCmd] = [undefined, []];
  const body = { ...(await fieldsFrom(flags)), ...clears };
  const podplate = client();
  // Reads first: the diff is against what was there, and --env/--port add to (not replace) the current values.
  const { value: before, etag: beforeTag } = await podplate.getTemplate(id, { includeEndpointBoundTemplates: true });
  let merged = false;
  if (flags.env || flags.unsetEnv) {
    const base: Record<string, string> = flags.replaceEnv ? {} : { ...before.env };
    for (const name of flags.unsetEnv ?? []) {
      if (!(name in base) && !flags.replaceEnv) note(`--unset-env ${name}: the template has no such variable.`);
      delete base[name];
    }
    body.env = { ...base, ...((body.env as Record<string, string> | undefined) ?? {}) };
    merged = !flags.replaceEnv || (flags.unsetEnv?.length ?? 0) > 0;
  } else if (flags.replaceEnv) body.env = {};
  if (flags.port || flags.unsetPort) {
    const unset = new Set(flags.unsetPort ?? []);
    const base = flags.replacePorts ? [] : before.ports.filter((p) => !unset.has(p));
    for (const port of unset) if (!before.ports.includes(port)) note(`--unset-port ${port}: the template has no such port.`);
    body.ports = [...new Set([...base, ...((body.ports as string[] | undefined) ?? [])])];
    merged = merged || !flags.replacePorts;
  } else if (flags.replacePorts) body.ports = [];
  if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one field flag or -f');
  // A merge is a read-modify-write: it applies only to the revision read, unless --if-match names another.
  const ifMatch = etagFlag(flags.ifMatch) ?? (merged ? beforeTag : undefined);
  const { value, etag } = await podplate.updateTemplate(id, body as TemplateUpdate, { ifMatch });
  printChange('Updated', before, value, etag, flags);
}

async function remove(id: string, flags: { yes?: boolean; ifMatch?: string; json?: boolean }): Promise<void> {
  if (!(await confirm(flags.yes, `template ${id}`))) {
    note('Not deleted.');
    return;
  }
  await client().deleteTemplate(id, { ifMatch: etagFlag(flags.ifMatch) });
  note(`Deleted template ${id}.`);
}

async function revisions(id: string, flags: OutputFlags & { showValues?: boolean }): Promise<void> {
  const all = await toArray(client().listRevisions(id));
  printList(all, revisionShape(flags.showValues), flags, 'No revisions.');
}

async function rollback(id: string, revision: string, flags: OutputFlags & { ifMatch?: string; idempotencyKey?: string }) {
  // An argument, not a flag: the message names it as the usage line does, and says where the numbers are.
  if (!/^(0|[1-9][0-9]{0,15})$/.test(revision))
    throw new UsageError(
      `<revision> must be a whole number (podplate templates revisions ${id} lists them), not ${JSON.stringify(revision)}`,
    );
  const n = Number(revision);
  const podplate = client();
  const { value: before } = await podplate.getTemplate(id, { includeEndpointBoundTemplates: true });
  const { value, etag } = await podplate.rollbackTemplate(id, n, {
    ifMatch: etagFlag(flags.ifMatch),
    idempotencyKey: flags.idempotencyKey,
  });
  printChange(`Rolled back to revision ${n}:`, before, value, etag, flags);
}

export function templateCommands(program: Command): void {
  const group = program
    .command('templates')
    .alias('template')
    .description('Templates: list, get, create, copy, update, delete, revisions, rollback, check, repin');

  withOutput(
    group
      .command('list')
      .alias('ls')
      .description(
        'List the templates you can see, newest first: your own (those bound to an endpoint are included), and with ' +
          'flags public and official ones. Env values are masked in every format unless --show-values is given.',
      )
      .option('--public', "include other accounts' public templates")
      .option('--platform', 'include official platform templates')
      .option('--bound', 'include templates bound to Serverless endpoints (the default)')
      .option('--no-bound', 'leave out templates bound to Serverless endpoints')
      .option('--category <NVIDIA|AMD|CPU>', 'only this category')
      .option('--serverless', 'only Serverless templates')
      .option('--pods', 'only Pod templates')
      .option('-s, --search <text>', 'only templates whose name or image contains the text (ignoring case)')
      .option('--limit <n>', 'templates per page (default 100, at most 1000)')
      .option('--all', 'follow the Link header through every page (default: the first page only)')
      .addOption(showValues()),
    true,
  )
    .addHelpText(
      'after',
      examples(
        'podplate templates ls',
        'podplate templates list --public --platform --category NVIDIA -s pytorch --all -o wide',
        'podplate templates ls -q | xargs -n1 podplate templates get',
      ),
    )
    .action(list);

  withOutput(
    group
      .command('get')
      .alias('show')
      .description(
        'Show a template: yours (bound to an endpoint or not), or any public or official one you can see. Env values are ' +
          'masked in every format, -o json|yaml included (secret references are shown), unless --show-values is given.',
      )
      .argument('<template-id>')
      .addOption(showValues()),
  )
    .addHelpText(
      'after',
      examples('podplate templates get 5x2k9d0v7m3qh8wz', 'podplate templates get 5x2k9d0v7m3qh8wz -o json | jq -r .imageName'),
    )
    .action(get);

  withOutput(
    fieldOptions(
      group
        .command('create')
        .description('Create a template. --name and --image are required (by flag or file); every other field has a default.'),
      false,
    )
      .option('--category <NVIDIA|AMD|CPU>', 'compute category (default NVIDIA; fixed once created)')
      .option('--serverless', 'a Serverless template (fixed once created)')
      .option('--idempotency-key <key>', 'retry safely: a repeat with the same key creates nothing new'),
  )
    .addOption(showValues())
    .addHelpText(
      'after',
      '\nA file that GET produced (templates get -o json/yaml) may be given to -f: the fields the server sets (id, revision,\n' +
        'createdAt …) are left out, and stderr says which.\n' +
        examples(
          'podplate templates create --name notebook --image runpod/pytorch:2.2.0 --port 8888/http --port 22/tcp -e JUPYTER_PASSWORD=secret',
          'podplate templates get 5x2k9d0v7m3qh8wz -o yaml | podplate templates create -f - --name "notebook (copy)"',
        ),
    )
    .action(create);

  withOutput(
    group
      .command('copy')
      .alias('duplicate')
      .description('Make a template of your own from any template you can see (its registry auth only if it is yours).')
      .argument('<template-id>')
      .option('--name <name>', 'the copy\'s name (default: "<name> (copy)")')
      .option('--public', 'make the copy public')
      .option('--private', 'make the copy private (the default for a copy of an official template)'),
  )
    .addOption(showValues())
    .addHelpText('after', examples('podplate templates copy 5x2k9d0v7m3qh8wz --name "my notebook"'))
    .action(copy);

  const updateCommand = withOutput(
    fieldOptions(
      group
        .command('update')
        .alias('edit')
        .description(
          'Change a template: only the fields given change, and the change is printed ("No changes" when nothing changed). ' +
            'A change makes a new revision and starts a rolling release on the bound endpoint.',
        )
        .argument('<template-id>'),
      true,
    )
      .option('--unset-env <KEY>', 'remove an environment variable; repeat for more', collect)
      .option('--unset-port <port/proto>', 'remove an exposed port; repeat for more', collect)
      .option('--replace-env', 'the --env values replace the whole environment (alone: clear it)')
      .option('--replace-ports', 'the --port values replace every port (alone: clear them)')
      .option('--no-env', 'clear the environment (as --replace-env alone; not with --env)')
      .option('--no-ports', 'clear the ports (as --replace-ports alone; not with --port)')
      .option('--no-entrypoint', "back to the image's own entrypoint (not with --entrypoint)")
      .option('--no-cmd', "back to the image's own start command (not with --cmd)")
      .option('--if-match <etag>', 'only if the template is still at this ETag (r3 or "r3"); 412 otherwise')
      .addOption(showValues()),
  ).addHelpText(
    'after',
    '\n--env and --port add to the current values (read first; the write then applies only to the revision read).\n' +
      'The change names the variables that changed, never their values, unless --show-values is given.\n' +
      examples(
        'podplate templates update 5x2k9d0v7m3qh8wz --image runpod/pytorch:2.2.0',
        'podplate templates update 5x2k9d0v7m3qh8wz -e HF_TOKEN=… --unset-env OLD --port 8080/http',
        'podplate templates update 5x2k9d0v7m3qh8wz -f changes.yaml --if-match r3',
      ),
  );
  const given = givenOptions(updateCommand);
  updateCommand.action((id: string, options: UpdateFlags) => update(id, options, given));

  group
    .command('delete')
    .aliases(['rm', 'remove'])
    .description('Delete a template with its revisions. A template bound to an endpoint cannot be deleted.')
    .argument('<template-id>')
    .option('-y, --yes', 'delete without asking (required when stdin is not a terminal)')
    .option('--if-match <etag>', 'only if the template is still at this ETag; 412 otherwise')
    .option('--json', 'accepted for scripts; prints nothing on stdout (the API answers 204)')
    .addHelpText('after', examples('podplate templates delete 5x2k9d0v7m3qh8wz', 'podplate templates rm 5x2k9d0v7m3qh8wz --yes'))
    .action(remove);

  withOutput(
    group
      .command('revisions')
      .alias('history')
      .description(
        'List every revision of one of your templates, newest first, with its author and changes. Changes name the ' +
          'variables changed, never their values, and every format masks env values unless --show-values is given.',
      )
      .argument('<template-id>')
      .option('--show-values', 'print env values and changed values in full'),
    true,
  )
    .addHelpText(
      'after',
      examples('podplate templates revisions 5x2k9d0v7m3qh8wz', 'podplate templates revisions 5x2k9d0v7m3qh8wz -o json'),
    )
    .action(revisions);

  withOutput(
    group
      .command('rollback')
      .description("Make a new revision with an earlier revision's content, and release it like any change; prints the change.")
      .argument('<template-id>', "the template's id")
      .argument('<revision>', 'the revision number to go back to (podplate templates revisions <template-id> lists them)')
      .option('--if-match <etag>', 'only if the template is still at this ETag (r3 or "r3"); 412 otherwise')
      .option('--idempotency-key <key>', 'retry safely: a repeat with the same key rolls back once')
      .addOption(showValues()),
  )
    .addHelpText('after', examples('podplate templates rollback 5x2k9d0v7m3qh8wz 3'))
    .action(rollback);

  imageCheckCommands(group);
}
