import { CloneType, type Static, type TSchema, Type } from '@sinclair/typebox';
import { conflict, DomainError, type FieldError, invalid } from './errors.ts';
import { CREDENTIALS_REFUSED, CREDENTIALS_REFUSED_UNNAMED, type ImageCheck, ImageCheckSchema } from './image-check.ts';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN } from './image-reference.ts';
import { MOUNT_PATH_PATTERN } from './mount-path.ts';
import { fold, nameSchema, newNameSchema } from './name.ts';
import { STORABLE_TEXT, STORABLE_TEXT_MESSAGE } from './text.ts';
import type { VisibleFacts } from './visibility.ts';

// The Template: its fields, their bounds and defaults. These schemas are the one statement of each rule:
// the request validator, the response serializer, the TypeScript types and the OpenAPI document derive from them.

export const CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const;
export type Category = (typeof CATEGORIES)[number];

export const PORT = '^(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})/(?:http|tcp)$';
export const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
/** ENV_NAME in words, for people (the pattern goes beside it in a problem's `errors[].pattern`). */
export const ENV_NAME_MESSAGE = 'must be letters, digits and underscores only, not starting with a digit (like HF_TOKEN)';

// Free text may hold any Unicode but NUL and lone UTF-16 surrogates: the HTTP layer refuses those in every string of a
// request (http/plugins/text.ts) and names each place; each field states the rule too (STORABLE_TEXT), so that what
// the document publishes is what the server takes. Sizes are in characters (Unicode code points), as JSON Schema's
// maxLength counts them, so that any validator counts them as the server does.

/** Free text of at most `maxLength` characters. */
const text = (maxLength: number, options: Record<string, unknown> = {}) =>
  Type.String({ maxLength, pattern: STORABLE_TEXT, errorMessage: STORABLE_TEXT_MESSAGE, ...options });

const commandLine = (what: string) =>
  Type.Array(text(4096), {
    maxItems: 64,
    description: `Overrides the image ${what} when specified. An empty array means the image's own ${what} is used.`,
  });

/** Every field a client may write, with its bounds (no defaults: create adds them, update never applies them). */
const writable = {
  name: nameSchema('User-defined name, unique among the templates of its owner.'),
  imageName: Type.String({
    minLength: 1,
    maxLength: IMAGE_REFERENCE_MAX_LENGTH,
    pattern: IMAGE_REFERENCE_PATTERN,
    description:
      'Image reference of the container run on Pods or workers created from the template: ' +
      '`[registry-host[:port]/]path[:tag][@sha256:<64 hex digits>]`. The repository path is lowercase: components of ' +
      'lowercase letters and digits joined by single separators (`.`, `_`, `__` or dashes), separated by `/`. The first ' +
      'component is a registry host when it has a `.` or a `:port` or is `localhost` (host names may have capitals). ' +
      'The tag is 1 to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`.',
    examples: ['runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04'],
  }),
  category: Type.Unsafe<Category>({
    type: 'string',
    enum: [...CATEGORIES],
    description: 'Compute category, used to filter templates in the UI.',
  }),
  containerDiskInGb: Type.Integer({
    minimum: 1,
    maximum: 16384,
    description: 'Gigabytes on the container disk of a Pod or worker. Data on it is wiped when the Pod or worker restarts.',
  }),
  volumeInGb: Type.Integer({
    minimum: 0,
    maximum: 16384,
    description: 'Gigabytes on the local network volume of a Pod or worker. Data on it persists across restarts.',
  }),
  volumeMountPath: Type.String({
    maxLength: 255,
    pattern: MOUNT_PATH_PATTERN,
    description:
      'Absolute path where a volume is mounted when one is attached, written in normal form: not "/", and no empty ' +
      '("//", a "/" at the end), "." or ".." segment, and no control characters.',
  }),
  containerRegistryAuthId: text(128, {
    description:
      'Identifier of the container registry auth object needed to pull a private image; "" for none. Any other value ' +
      "must be the id of a registry auth of the template's owner (400 otherwise).",
  }),
  dockerEntrypoint: commandLine('ENTRYPOINT'),
  dockerStartCmd: commandLine('start CMD'),
  env: Type.Unsafe<Record<string, string>>({
    type: 'object',
    maxProperties: 256,
    propertyNames: {
      maxLength: 255,
      pattern: ENV_NAME,
      // A body's parser refuses this key for safety (http/plugins/json.ts): stated, so that no client sends it.
      not: { const: '__proto__' },
      errorMessage: ENV_NAME_MESSAGE,
    },
    additionalProperties: text(32768),
    description:
      'Environment variables: a map from variable name to its value (at most 32768 characters). A value may refer to ' +
      'a secret of the launching account as `{{ secret.NAME }}` (NAME like a variable name, at most 128 characters); ' +
      'a `{{` followed by `secret.` that is not such a reference is a 400. A public template may hold no literal token ' +
      'of a well-known format (400).',
    examples: [{ HF_HOME: '/workspace/hf' }],
  }),
  ports: Type.Array(
    Type.String({ pattern: PORT, errorMessage: 'must be a port from 1 to 65535 and the protocol http or tcp, like 8888/http' }),
    {
      maxItems: 64,
      uniqueItems: true,
      description: 'Ports exposed on a Pod or worker, each `<port number>/<protocol>` with protocol `http` or `tcp`.',
      examples: [['8888/http', '22/tcp']],
    },
  ),
  readme: text(102400, {
    description: 'Markdown describing the template (at most 102400 characters); displayed in the UI when the template is selected.',
  }),
  isPublic: Type.Boolean({ description: '`true`: public, usable by any user. `false`: private, usable only by the creator.' }),
  isServerless: Type.Boolean({
    description: '`true`: instances created from the template are Serverless workers. `false`: they are Pods.',
  }),
};

export const TEMPLATE_DEFAULTS = {
  category: 'NVIDIA' as Category,
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: [] as string[],
  dockerStartCmd: [] as string[],
  env: {} as Record<string, string>,
  ports: [] as string[],
  readme: '',
  isPublic: false,
  isServerless: false,
};
type Defaulted = keyof typeof TEMPLATE_DEFAULTS;

const withDefault = <K extends Defaulted>(key: K) =>
  Type.Optional(CloneType(writable[key] as (typeof writable)[K], { default: TEMPLATE_DEFAULTS[key] }));

/** A name as a write gives it: the stored bounds, and the rule of names that look alike (domain/name.ts). */
const newName = newNameSchema('User-defined name, unique among the templates of its owner.');

export const TemplateCreate = Type.Object(
  {
    name: newName,
    imageName: writable.imageName,
    category: withDefault('category'),
    containerDiskInGb: withDefault('containerDiskInGb'),
    volumeInGb: withDefault('volumeInGb'),
    volumeMountPath: withDefault('volumeMountPath'),
    containerRegistryAuthId: withDefault('containerRegistryAuthId'),
    dockerEntrypoint: withDefault('dockerEntrypoint'),
    dockerStartCmd: withDefault('dockerStartCmd'),
    env: withDefault('env'),
    ports: withDefault('ports'),
    readme: withDefault('readme'),
    isPublic: withDefault('isPublic'),
    isServerless: withDefault('isServerless'),
  },
  { additionalProperties: false, $id: 'TemplateCreateInput', title: 'TemplateCreateInput' },
);
export type TemplateCreate = Static<typeof TemplateCreate>;

/** Fields that can't be changed after creation. */
export const IMMUTABLE_FIELDS = ['category', 'isServerless'] as const;

/** Fields the server owns: a create that sends one is refused. */
export const READ_ONLY_FIELDS = [
  'id',
  'isPlatform',
  'earned',
  'runtimeInMin',
  'revision',
  'createdAt',
  'updatedAt',
  'ownerName',
  'imageCheck',
] as const;

const timestamp = (description: string) => Type.String({ format: 'date-time', description });

/** The fields the server sets: identity, accounting and history. */
const serverSet = {
  id: Type.String({ description: 'Unique identifier of the template.', examples: ['30zmvf89kd4q'] }),
  isPlatform: Type.Boolean({ description: '`true` when the template is an official template managed by the platform.' }),
  earned: Type.Number({ description: 'Platform credits earned by the creator across all Pods or workers created from it.' }),
  runtimeInMin: Type.Integer({ description: 'Minutes of runtime of all Pods or workers created from the template.' }),
  revision: Type.Integer({ minimum: 1, description: 'Revision number: 1 at creation, one more on every change.' }),
  createdAt: timestamp('When the template was created (ISO 8601).'),
  updatedAt: timestamp('When the template last changed (ISO 8601).'),
  imageCheck: ImageCheckSchema,
};

const ownerName = Type.String({ description: "The account name of the template's owner (list items carry it)." });

/** A field an update may carry back from a read: accepted with its current value, and ignored. */
const sentBack = <T extends TSchema>(schema: T, otherwise: string) =>
  Type.Optional(
    CloneType({ ...schema, description: `${schema.description} Accepted, and ignored, when it equals the current value; ${otherwise}.` }),
  );
const refusedUnlessCurrent = 'another value is a 400';

export const TemplateUpdate = Type.Object(
  {
    name: Type.Optional(newName),
    imageName: Type.Optional(writable.imageName),
    containerDiskInGb: Type.Optional(writable.containerDiskInGb),
    volumeInGb: Type.Optional(writable.volumeInGb),
    volumeMountPath: Type.Optional(writable.volumeMountPath),
    containerRegistryAuthId: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 128,
        pattern: STORABLE_TEXT,
        errorMessage: STORABLE_TEXT_MESSAGE,
        description:
          'Identifier of the container registry auth object; `null` or "" clears it. Any other value must be the id of ' +
          "a registry auth of the template's owner (400 otherwise).",
      }),
    ),
    dockerEntrypoint: Type.Optional(writable.dockerEntrypoint),
    dockerStartCmd: Type.Optional(writable.dockerStartCmd),
    env: Type.Optional(writable.env),
    ports: Type.Optional(writable.ports),
    readme: Type.Optional(writable.readme),
    isPublic: Type.Optional(writable.isPublic),
    id: sentBack(serverSet.id, refusedUnlessCurrent),
    category: sentBack(writable.category, `${refusedUnlessCurrent}: it can't be changed after creation`),
    isServerless: sentBack(writable.isServerless, `${refusedUnlessCurrent}: it can't be changed after creation`),
    isPlatform: sentBack(serverSet.isPlatform, refusedUnlessCurrent),
    earned: sentBack(serverSet.earned, refusedUnlessCurrent),
    runtimeInMin: sentBack(serverSet.runtimeInMin, refusedUnlessCurrent),
    revision: sentBack(serverSet.revision, 'another value is a 412, as a stale If-Match is: the template changed since it was read'),
    createdAt: sentBack(serverSet.createdAt, `${refusedUnlessCurrent} (compared as instants)`),
    updatedAt: sentBack(serverSet.updatedAt, `${refusedUnlessCurrent} (compared as instants)`),
    ownerName: sentBack(ownerName, refusedUnlessCurrent),
    imageCheck: Type.Optional(
      CloneType({
        ...ImageCheckSchema,
        description: 'Read-only: accepted, and ignored, whatever it holds (the server changes it without a new revision).',
      }),
    ),
  },
  {
    additionalProperties: false,
    $id: 'TemplateUpdateInput',
    title: 'TemplateUpdateInput',
    description:
      'A partial update: absent fields keep their value; env, ports and the arrays are replaced whole. ' +
      '`category` and `isServerless` cannot be changed, and the server-set fields are read-only, but a template as ' +
      'read (GET) may be sent back whole: those fields are ignored when they hold their current values. ' +
      'A change triggers a rolling release for any bound endpoint.',
  },
);
export type TemplateUpdate = Static<typeof TemplateUpdate>;

const { id, ...accounting } = serverSet;
export const Template = Type.Object(
  { id, ...writable, ...accounting },
  { $id: 'Template', title: 'Template', additionalProperties: false },
);
export type Template = Static<typeof Template>;

/** A template as a list shows it: with its owner's account name. */
export const TemplateListItem = Type.Object(
  { ...Template.properties, ownerName },
  { $id: 'TemplateListItem', title: 'TemplateListItem', additionalProperties: false },
);
export type TemplateListItem = Static<typeof TemplateListItem>;

/** A list item's JSON text: `json` (as `templateJson` made it) with the owner's name added last. */
export const withOwnerName = (json: string, name: string): string => `${json.slice(0, -1)},"ownerName":${JSON.stringify(name)}}`;

/** A template as stored: what the API shows, and who owns it and which endpoint runs it. */
export interface TemplateRecord extends Template {
  ownerId: string;
  endpointId: string | null;
}

export const templateNameTaken = () =>
  conflict('You already have a template with this name.', [{ path: '/name', message: 'is already the name of another of your templates' }]);

/** A template as a read needs it: the facts that decide who sees it, its revision, and its representation. */
export interface TemplateView extends VisibleFacts {
  revision: number;
  /** Where its image check stands: part of its entity tag, since a check changes the representation, not the revision. */
  imageCheck: { status: string; checkedAt: string | null };
  /** The registry auth it names ("" for none): not shown to those who may not know it. */
  registryAuthId: string;
  /** The template as the API shows it, as JSON text. */
  json: string;
}

const TEMPLATE_FIELDS = Object.keys(Template.properties) as (keyof Template)[];

/**
 * The template exactly as the API shows it, as JSON text: its fields in the schema's order and nothing else.
 * The store keeps this beside every row, so that reads send it as it is instead of building it anew.
 */
export function templateJson(template: Template): string {
  const shown: Record<string, unknown> = {};
  for (const field of TEMPLATE_FIELDS) shown[field] = template[field];
  return JSON.stringify(shown);
}

/**
 * A template's JSON text as `templateJson` made it, shown with containerRegistryAuthId "" (to those who may not know
 * which auth it names): the field set by name, the rest as it was. A template naming no auth is its text as it is.
 */
export function withoutRegistryAuth(json: string, registryAuthId: string): string {
  if (registryAuthId === '') return json;
  const template = JSON.parse(json) as Template;
  return templateJson({ ...template, containerRegistryAuthId: '', imageCheck: withoutAuthName(template.imageCheck) });
}

/** A check whose reason names the template's registry auth, as those who may not know the auth see it. */
const withoutAuthName = (check: ImageCheck): ImageCheck =>
  check.reason?.startsWith(CREDENTIALS_REFUSED) ? { ...check, reason: CREDENTIALS_REFUSED_UNNAMED } : check;

/** The content of a template: everything a user chose, without identity, accounting or history. */
export const CONTENT_FIELDS = Object.keys(writable) as (keyof typeof writable)[];
export type TemplateContent = Pick<Template, (typeof CONTENT_FIELDS)[number]>;

/** The content of a new template: the input with every absent field at its default. */
export function newTemplateContent(input: TemplateCreate): TemplateContent {
  return { ...structuredClone(TEMPLATE_DEFAULTS), ...input };
}

/** Fields a read shows that an update may send back unchanged: fixed at creation, or set by the server. */
export const SENT_BACK_FIELDS = [...IMMUTABLE_FIELDS, ...READ_ONLY_FIELDS] as const;
const sentBackFields = new Set<string>(SENT_BACK_FIELDS);

/**
 * The content after applying a partial update: absent fields keep their value; null clears the registry auth.
 * Fields sent back from a read are not content to apply (checkSentBack compares them).
 */
export function applyUpdate(current: TemplateContent, update: TemplateUpdate): TemplateContent {
  const content: TemplateContent = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === undefined || sentBackFields.has(key)) continue;
    (content as Record<string, unknown>)[key] = key === 'containerRegistryAuthId' && value === null ? '' : value;
  }
  return content;
}

/**
 * A template read with GET, edited and sent back whole carries its fixed and server-set fields: each is accepted
 * when it equals the current value. A `revision` that differs says the update was based on an older revision: a
 * 412, as a stale If-Match is. Any other that differs is a 400 naming it.
 */
export function checkSentBack(current: Template & { ownerName: string }, update: TemplateUpdate): void {
  if (update.revision !== undefined && update.revision !== current.revision) {
    throw new DomainError(
      'precondition-failed',
      `The template is at revision ${current.revision}, not ${update.revision} as the request's revision says; read it again.`,
    );
  }
  const errors: FieldError[] = [];
  for (const field of SENT_BACK_FIELDS) {
    const sent = update[field];
    // The image check changes on its own, without a revision: a read's, however old, is as good as any.
    if (sent === undefined || field === 'revision' || field === 'imageCheck') continue;
    const value = current[field];
    const same = field === 'createdAt' || field === 'updatedAt' ? Date.parse(String(sent)) === Date.parse(String(value)) : sent === value;
    if (same) continue;
    const rule = (IMMUTABLE_FIELDS as readonly string[]).includes(field)
      ? "can't be changed after the template is created"
      : 'is read-only: the server sets it';
    errors.push({ path: `/${field}`, message: `${rule}; send its current value (${JSON.stringify(value)}) or leave it out` });
  }
  if (errors.length > 0) {
    const names = errors.map((e) => e.path.slice(1)).join(', ');
    throw invalid(`Fields fixed at creation or set by the server may be sent back only with their current values: ${names}.`, errors);
  }
}

/** Equality of JSON values; arrays are ordered, objects (env) are maps whose key order does not matter. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  return aKeys.every((k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Text as `q` compares it: folded as names are (domain/name.ts `fold`: NFC, lowercased with the final sigma and the
 * dotted capital I as the other letters). Applied alike to a template's name and image (the stored `search`) and to
 * the term.
 */
export const searchFold = fold;
