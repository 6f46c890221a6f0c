import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { type Endpoint, type PodplateClient, type Release, toArray } from '../client/index.ts';
import { releaseState } from '../domain/release-state.ts';
import { confirm, integerFlag, type OutputFlags, printData, printList, printsData, showValues, UsageError, withOutput } from './command.ts';
import { client } from './config.ts';
import { diffOf, diffText, endpointDetails, endpointShape, note, out, releaseShape } from './output.ts';

// podplate endpoints list|get|create|update|delete and podplate releases list|watch

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

/** The names of the endpoints' templates (the caller's own, bound: read with the flag), by template id. */
async function templateNames(podplate: PodplateClient, endpoints: Endpoint[]): Promise<Map<string, string>> {
  const ids = [...new Set(endpoints.map((e) => e.templateId))];
  const names = await Promise.all(
    ids.map((id) =>
      podplate.getTemplate(id, { includeEndpointBoundTemplates: true }).then(
        ({ value }) => [id, value.name] as const,
        () => undefined,
      ),
    ),
  );
  return new Map(names.filter((n) => n !== undefined));
}

async function list(flags: OutputFlags): Promise<void> {
  const podplate = client();
  const endpoints = await toArray(podplate.listEndpoints());
  const names = flags.quiet || printsData(flags) ? new Map() : await templateNames(podplate, endpoints);
  printList(endpoints, endpointShape(names), flags, 'No endpoints.');
}

async function get(id: string, flags: OutputFlags): Promise<void> {
  const podplate = client();
  const endpoint = await podplate.getEndpoint(id);
  if (!printData(endpoint, flags)) out(endpointDetails(endpoint, (await templateNames(podplate, [endpoint])).get(endpoint.templateId)));
}

interface EndpointFlags extends OutputFlags {
  name?: string;
  template?: string;
  workersMin?: string;
  workersMax?: string;
}

async function create(flags: EndpointFlags): Promise<void> {
  if (flags.name === undefined || flags.template === undefined)
    throw new UsageError(`an endpoint needs ${flags.name === undefined ? '--name' : '--template'}`);
  const workersMin = integerFlag('workers-min', flags.workersMin);
  const workersMax = integerFlag('workers-max', flags.workersMax);
  const endpoint = await client().createEndpoint({
    name: flags.name,
    templateId: flags.template,
    ...(workersMin !== undefined ? { workersMin } : {}),
    ...(workersMax !== undefined ? { workersMax } : {}),
  });
  if (!printData(endpoint, flags)) out(`Created endpoint ${endpoint.id}.\n\n${endpointDetails(endpoint)}`);
}

async function update(id: string, flags: EndpointFlags): Promise<void> {
  const workersMin = integerFlag('workers-min', flags.workersMin);
  const workersMax = integerFlag('workers-max', flags.workersMax);
  const body = {
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.template !== undefined ? { templateId: flags.template } : {}),
    ...(workersMin !== undefined ? { workersMin } : {}),
    ...(workersMax !== undefined ? { workersMax } : {}),
  };
  if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --template, --workers-min or --workers-max');
  const podplate = client();
  const before = await podplate.getEndpoint(id);
  const after = await podplate.updateEndpoint(id, body);
  if (printData(after, flags)) return;
  const changes = diffOf<Endpoint>(before, after, ['name', 'templateId', 'workersMin', 'workersMax']);
  if (changes.length === 0) {
    out(`No changes: endpoint ${after.id} is as it was.`);
    return;
  }
  const release =
    after.version > before.version ? `\nA rolling release to template ${after.templateId} started (version ${after.version}).` : '';
  out(`Updated endpoint ${after.id}.\n${diffText(changes)}${release}`);
}

async function remove(id: string, flags: { yes?: boolean }): Promise<void> {
  if (!(await confirm(flags.yes, `endpoint ${id}`))) {
    note('Not deleted.');
    return;
  }
  await client().deleteEndpoint(id);
  note(`Deleted endpoint ${id}.`);
}

async function releasesList(endpointId: string, flags: OutputFlags): Promise<void> {
  const releases = await toArray(client().listReleases(endpointId));
  printList(releases, releaseShape(releases), flags, 'No releases.');
}

const FINISHED = new Set(['completed', 'failed', 'superseded']);

function seconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !Number.isFinite(n))
    throw new UsageError(`--${flag} takes seconds, not ${JSON.stringify(value)}`);
  return n;
}

async function endpointOfTemplate(podplate: PodplateClient, templateId: string): Promise<string> {
  for await (const endpoint of podplate.listEndpoints()) if (endpoint.templateId === templateId) return endpoint.id;
  throw new WatchError(`template ${templateId} is not bound to any of your endpoints: it has no releases`);
}

/**
 * A release is written in the same transaction as the change that starts it, so once the template has reached
 * `revision`, a release of it that is not there yet never will be.
 */
async function releaseWillNotCome(podplate: PodplateClient, endpointId: string, revision: number): Promise<boolean> {
  const { templateId } = await podplate.getEndpoint(endpointId);
  const { value: template } = await podplate.getTemplate(templateId, { includeEndpointBoundTemplates: true });
  return template.revision >= revision;
}

/** The release of the template's `revision` on the endpoint, searched newest first through every page. */
async function releaseOf(podplate: PodplateClient, endpointId: string, revision: number): Promise<Release | undefined> {
  for await (const release of podplate.listReleases(endpointId, 100)) if (release.templateRevision === revision) return release;
  return undefined;
}

/** The watched release did not complete: exit 1 with the message. */
export class WatchError extends Error {}

interface WatchFlags extends OutputFlags {
  template?: string;
  revision?: string;
  interval?: string;
  timeout?: string;
}

async function releasesWatch(endpoint: string | undefined, values: WatchFlags): Promise<void> {
  if ((endpoint === undefined) === (values.template === undefined))
    throw new UsageError('give an <endpoint-id> or --template, one of them');
  const revision = integerFlag('revision', values.revision);
  const interval = seconds('interval', values.interval, 2) * 1000;
  const deadline = Date.now() + seconds('timeout', values.timeout, 600) * 1000;
  const podplate = client();
  const endpointId = endpoint ?? (await endpointOfTemplate(podplate, values.template as string));
  const wanted = revision === undefined ? 'its newest release' : `the release of template revision ${revision}`;

  let last = '';
  for (;;) {
    const { items: page } = await podplate.listReleasesPage(endpointId, 20);
    let release: Release | undefined = revision === undefined ? page[0] : page.find((r) => r.templateRevision === revision);
    if (!release && revision !== undefined && (await releaseWillNotCome(podplate, endpointId, revision))) {
      // The revision is there, and its release (if any) committed with it: look through every page before saying none.
      release = await releaseOf(podplate, endpointId, revision);
      if (!release) {
        note(
          `Template revision ${revision} started no release on endpoint ${endpointId} (it changed nothing, or the endpoint was created later): nothing to wait for.`,
        );
        return;
      }
    }
    if (release) {
      // In the words `releases list` and the web UI use (domain/release-state.ts).
      const state = `release ${release.version} (${release.id}, template revision ${release.templateRevision}): ${releaseState(release, page)}`;
      if (state !== last) note(state);
      last = state;
      if (FINISHED.has(release.status)) {
        if (values.json || values.output === 'json' || values.output === 'yaml') printData(release, values);
        if (release.status !== 'completed')
          throw new WatchError(`release ${release.version} (${release.id}): ${releaseState(release, page)}`);
        return;
      }
    }
    if (Date.now() >= deadline)
      throw new WatchError(
        `gave up waiting for ${wanted} of endpoint ${endpointId}: ${release ? `still ${release.status}` : 'not there yet'}`,
      );
    await sleep(Math.max(0, Math.min(interval, deadline - Date.now())));
  }
}

export function endpointCommands(program: Command): void {
  const group = program.command('endpoints').alias('endpoint').description('Serverless endpoints: list, get, create, update, delete');
  withOutput(group.command('list').alias('ls').description('List your Serverless endpoints, newest first.'), true)
    .addHelpText('after', examples('podplate endpoints list', 'podplate endpoints ls -o wide'))
    .action(list);
  withOutput(group.command('get').alias('show').description('Show an endpoint.').argument('<endpoint-id>'))
    .addHelpText('after', examples('podplate endpoints get 7c1q0d9x2m4kp8za'))
    .action(get);
  withOutput(
    group
      .command('create')
      .description('Create a Serverless endpoint bound to one of your Serverless templates.')
      .option('--name <name>', 'the name, unique among your endpoints')
      .option('--template <id>', 'the Serverless template it runs')
      .option('--workers-min <n>', 'workers kept running (default 0)')
      .option('--workers-max <n>', 'most workers at once (default 3)'),
  )
    .addHelpText('after', examples('podplate endpoints create --name inference --template 5x2k9d0v7m3qh8wz --workers-max 5'))
    .action(create);
  withOutput(
    group
      .command('update')
      .alias('edit')
      .description(
        'Rename, resize or rebind an endpoint, printing the change ("No changes" when nothing changed). A new --template ' +
          'must be a Serverless template of yours not bound elsewhere; rebinding starts a rolling release to it.',
      )
      .argument('<endpoint-id>')
      .option('--name <name>', 'a new name')
      .option('--template <id>', 'run this template instead (unbinds the old one)')
      .option('--workers-min <n>', 'workers kept running')
      .option('--workers-max <n>', 'most workers at once'),
  )
    .addHelpText(
      'after',
      examples(
        'podplate endpoints update 7c1q0d9x2m4kp8za --workers-max 8',
        'podplate endpoints update 7c1q0d9x2m4kp8za --template 5x2k9d0v7m3qh8wz',
      ),
    )
    .action(update);
  group
    .command('delete')
    .aliases(['rm', 'remove'])
    .description('Delete an endpoint; its template is unbound.')
    .argument('<endpoint-id>')
    .option('-y, --yes', 'delete without asking (required when stdin is not a terminal)')
    .option('--json', 'accepted for scripts; prints nothing on stdout (the API answers 204)')
    .addHelpText('after', examples('podplate endpoints delete 7c1q0d9x2m4kp8za', 'podplate endpoints rm 7c1q0d9x2m4kp8za --yes'))
    .action(remove);
}

export function releaseCommands(program: Command): void {
  const group = program.command('releases').alias('release').description("An endpoint's rolling releases: list, watch");
  withOutput(
    group
      .command('list')
      .alias('ls')
      .description("List an endpoint's rolling releases, newest first, with where each stands (-o wide adds the webhook's delivery).")
      .argument('<endpoint-id>')
      .addOption(showValues()),
    true,
  )
    .addHelpText('after', examples('podplate releases list 7c1q0d9x2m4kp8za'))
    .action(releasesList);
  withOutput(
    group
      .command('watch')
      .description(
        'Wait for a release to finish: exit 0 when it completes, 1 when it fails, is superseded, or the timeout passes. ' +
          "Watches the endpoint's newest release, or the one of --revision.",
      )
      .argument('[endpoint-id]')
      .option('--template <id>', 'watch the endpoint bound to this template (instead of <endpoint-id>)')
      .option('--revision <n>', 'the release of this template revision (waits for the revision; exit 0 if it made no release)')
      .option('--interval <seconds>', 'time between polls (default 2)')
      .option('--timeout <seconds>', 'give up after this long (default 600)'),
  )
    .addHelpText(
      'after',
      examples(
        'podplate releases watch 7c1q0d9x2m4kp8za',
        'podplate releases watch --template 5x2k9d0v7m3qh8wz --revision 4 --timeout 900',
      ),
    )
    .action(releasesWatch);
}
