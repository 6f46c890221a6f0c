import { setTimeout as sleep } from 'node:timers/promises';
import { type PodplateClient, type Release, toArray } from '../client/index.ts';
import { defineCommand, integerFlag, parseCommand, UsageError, usageOf } from './args.ts';
import { client } from './config.ts';
import { endpointDetails, endpointTable, note, out, printJson, releaseTable } from './output.ts';

// podplate endpoints list|get|create|delete and podplate releases list|watch

const listSpec = defineCommand({
  name: 'endpoints list',
  summary: 'List your Serverless endpoints, newest first.',
  options: {},
  help: { '--json': "print the API's JSON: an array of every endpoint" },
  examples: ['podplate endpoints list'],
});

async function list(argv: string[]): Promise<number> {
  const parsed = parseCommand(listSpec, argv);
  if (!parsed) return 0;
  const endpoints = await toArray(client().listEndpoints());
  if (parsed.values.json) printJson(endpoints);
  else if (endpoints.length === 0) note('No endpoints.');
  else out(endpointTable(endpoints));
  return 0;
}

const getSpec = defineCommand({
  name: 'endpoints get',
  args: ['<endpoint-id>'],
  summary: 'Show an endpoint.',
  options: {},
  help: { '--json': "print the API's JSON" },
  examples: ['podplate endpoints get 7c1q0d9x2m4kp8za'],
});

async function get(argv: string[]): Promise<number> {
  const parsed = parseCommand(getSpec, argv);
  if (!parsed) return 0;
  const endpoint = await client().getEndpoint(parsed.positionals[0] as string);
  if (parsed.values.json) printJson(endpoint);
  else out(endpointDetails(endpoint));
  return 0;
}

const createSpec = defineCommand({
  name: 'endpoints create',
  summary: 'Create a Serverless endpoint bound to one of your Serverless templates.',
  options: { name: { type: 'string' }, template: { type: 'string' }, 'workers-min': { type: 'string' }, 'workers-max': { type: 'string' } },
  help: {
    '--name <name>': 'the name, unique among your endpoints',
    '--template <id>': 'the Serverless template it runs',
    '--workers-min <n>': 'workers kept running (default 0)',
    '--workers-max <n>': 'most workers at once (default 3)',
    '--json': "print the API's JSON",
  },
  examples: ['podplate endpoints create --name inference --template 5x2k9d0v7m3qh8wz --workers-max 5'],
});

async function create(argv: string[]): Promise<number> {
  const parsed = parseCommand(createSpec, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const usage = usageOf(createSpec);
  if (values.name === undefined || values.template === undefined)
    throw new UsageError(`an endpoint needs ${values.name === undefined ? '--name' : '--template'}`, usage);
  const workersMin = integerFlag('workers-min', values['workers-min'], usage);
  const workersMax = integerFlag('workers-max', values['workers-max'], usage);
  const endpoint = await client().createEndpoint({
    name: values.name,
    templateId: values.template,
    ...(workersMin !== undefined ? { workersMin } : {}),
    ...(workersMax !== undefined ? { workersMax } : {}),
  });
  if (values.json) printJson(endpoint);
  else out(`Created endpoint ${endpoint.id}.\n\n${endpointDetails(endpoint)}`);
  return 0;
}

const deleteSpec = defineCommand({
  name: 'endpoints delete',
  args: ['<endpoint-id>'],
  summary: 'Delete an endpoint; its template is unbound.',
  options: {},
  help: { '--json': 'print nothing (the API answers 204)' },
  examples: ['podplate endpoints delete 7c1q0d9x2m4kp8za'],
});

async function remove(argv: string[]): Promise<number> {
  const parsed = parseCommand(deleteSpec, argv);
  if (!parsed) return 0;
  const id = parsed.positionals[0] as string;
  await client().deleteEndpoint(id);
  if (!parsed.values.json) note(`Deleted endpoint ${id}.`);
  return 0;
}

export const endpointCommands = {
  list: { spec: listSpec, run: list },
  get: { spec: getSpec, run: get },
  create: { spec: createSpec, run: create },
  delete: { spec: deleteSpec, run: remove },
};

const releasesListSpec = defineCommand({
  name: 'releases list',
  args: ['<endpoint-id>'],
  summary: "List an endpoint's rolling releases, newest first, with their progress and webhook delivery.",
  options: {},
  help: { '--json': "print the API's JSON: an array of every release" },
  examples: ['podplate releases list 7c1q0d9x2m4kp8za'],
});

async function releasesList(argv: string[]): Promise<number> {
  const parsed = parseCommand(releasesListSpec, argv);
  if (!parsed) return 0;
  const releases = await toArray(client().listReleases(parsed.positionals[0] as string));
  if (parsed.values.json) printJson(releases);
  else if (releases.length === 0) note('No releases.');
  else out(releaseTable(releases));
  return 0;
}

const watchSpec = defineCommand({
  name: 'releases watch',
  args: ['[endpoint-id]'],
  summary:
    'Wait for a release to finish: exit 0 when it completes, 1 when it fails, is superseded, or the timeout passes. ' +
    "Watches the endpoint's newest release, or the one of --revision.",
  options: { template: { type: 'string' }, revision: { type: 'string' }, interval: { type: 'string' }, timeout: { type: 'string' } },
  help: {
    '--template <id>': 'watch the endpoint bound to this template (instead of <endpoint-id>)',
    '--revision <n>': 'the release of this template revision (waits for the revision; exit 0 if it made no release)',
    '--interval <seconds>': 'time between polls (default 2)',
    '--timeout <seconds>': 'give up after this long (default 600)',
    '--json': "print the finished release as the API's JSON",
  },
  examples: ['podplate releases watch 7c1q0d9x2m4kp8za', 'podplate releases watch --template 5x2k9d0v7m3qh8wz --revision 4 --timeout 900'],
});

const FINISHED = new Set(['completed', 'failed', 'superseded']);

function seconds(flag: string, value: string | undefined, fallback: number, usage: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !Number.isFinite(n))
    throw new UsageError(`--${flag} takes seconds, not ${JSON.stringify(value)}`, usage);
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

async function releasesWatch(argv: string[]): Promise<number> {
  const parsed = parseCommand(watchSpec, argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const usage = usageOf(watchSpec);
  if ((positionals[0] === undefined) === (values.template === undefined))
    throw new UsageError('give an <endpoint-id> or --template, one of them', usage);
  const revision = integerFlag('revision', values.revision, usage);
  const interval = seconds('interval', values.interval, 2, usage) * 1000;
  const deadline = Date.now() + seconds('timeout', values.timeout, 600, usage) * 1000;
  const podplate = client();
  const endpointId = positionals[0] ?? (await endpointOfTemplate(podplate, values.template as string));
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
        return 0;
      }
    }
    if (release) {
      const state = `release ${release.id} (version ${release.version}, template revision ${release.templateRevision}): ${release.status} ${release.workersUpdated}/${release.workersTotal} workers`;
      if (state !== last && !values.json) note(state);
      last = state;
      if (FINISHED.has(release.status)) {
        if (values.json) printJson(release);
        if (release.status !== 'completed') throw new WatchError(`release ${release.id} ${release.status}`);
        return 0;
      }
    }
    if (Date.now() >= deadline)
      throw new WatchError(
        `gave up waiting for ${wanted} of endpoint ${endpointId}: ${release ? `still ${release.status}` : 'not there yet'}`,
      );
    await sleep(Math.max(0, Math.min(interval, deadline - Date.now())));
  }
}

export const releaseCommands = {
  list: { spec: releasesListSpec, run: releasesList },
  watch: { spec: watchSpec, run: releasesWatch },
};
