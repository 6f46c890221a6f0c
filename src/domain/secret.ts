import { type Static, Type } from '@sinclair/typebox';
import { DomainError, escapePointer, type FieldError, invalid } from './errors.ts';
import { RegistryAuthCredentials } from './registry-auth.ts';
import { ENV_NAME, ENV_NAME_MESSAGE, Template } from './template.ts';
import { STORABLE_TEXT, STORABLE_TEXT_MESSAGE } from './text.ts';
import { firstToken } from './token-formats.ts';

// Secrets: values an account keeps sealed, named like env variables, and the references to them a template's env may
// hold, `{{ secret.NAME }}`. A template holds only the reference; the launching account's own secret replaces it at
// launch (POST /v1/templates/{id}/resolve), so a public template says what it needs and each user supplies their own.

export const SECRET_VALUE_MAX = 32768;
/** What one resolve may make of a template's env: its values with every reference replaced, in bytes. */
export const RESOLVED_ENV_MAX = 1024 * 1024;
/** Names are env names, but short enough to travel in a URL path (the router reads path segments of up to 200). */
export const SECRET_NAME_MAX = 128;

export const SecretName = Type.String({
  minLength: 1,
  maxLength: SECRET_NAME_MAX,
  pattern: ENV_NAME,
  errorMessage: ENV_NAME_MESSAGE,
  description: 'The name of the secret, as references name it: like an environment variable name (`HF_TOKEN`).',
  examples: ['HF_TOKEN'],
});

export const SecretNameParam = Type.Object({ name: SecretName }, { additionalProperties: false });

export const SecretPut = Type.Object(
  {
    value: Type.String({
      minLength: 1,
      maxLength: SECRET_VALUE_MAX,
      pattern: STORABLE_TEXT,
      errorMessage: STORABLE_TEXT_MESSAGE,
      writeOnly: true,
      description: `The secret's value, at most ${SECRET_VALUE_MAX} characters. Stored encrypted; never shown again.`,
      examples: ['hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'],
    }),
  },
  { additionalProperties: false, $id: 'SecretInput', title: 'SecretInput' },
);
export type SecretPut = Static<typeof SecretPut>;

export const Secret = Type.Object(
  {
    name: Type.String({ description: 'The name references use: `{{ secret.NAME }}`.' }),
    createdAt: Type.String({ format: 'date-time', description: 'When it was first set (ISO 8601).' }),
    updatedAt: Type.String({ format: 'date-time', description: 'When its value was last set (ISO 8601).' }),
  },
  {
    $id: 'Secret',
    title: 'Secret',
    additionalProperties: false,
    description: 'A secret of yours, as listed: never its value.',
  },
);
export type Secret = Static<typeof Secret>;

/** A secret as stored, but for its value. */
export interface SecretRecord extends Secret {
  id: string;
  ownerId: string;
}

/** As stored: with the value sealed (see sealing/keyring.ts), never in plain text. */
export interface SealedSecret extends SecretRecord {
  sealedValue: string;
}

export const shownSecret = ({ name, createdAt, updatedAt }: SecretRecord): Secret => ({ name, createdAt, updatedAt });

const NAME = new RegExp(ENV_NAME);
const OPEN = '{{';
const CLOSE = '}}';
const KEYWORD = 'secret.';

/** One `{{ secret.NAME }}` in a value: where it is and what it names. */
interface Reference {
  start: number;
  end: number;
  name: string;
}

/**
 * The secret references in `value`, in order, or what is wrong with the first malformed one. A `{{` that does not go
 * on (after spaces) with `secret.` is text like any other (a template engine's, say), left alone. One pass.
 */
export function referencesIn(value: string): { references: Reference[]; malformed?: string } {
  const references: Reference[] = [];
  let at = value.indexOf(OPEN);
  while (at >= 0) {
    let i = at + OPEN.length;
    while (value[i] === ' ') i++;
    if (!value.startsWith(KEYWORD, i)) {
      at = value.indexOf(OPEN, at + 1);
      continue;
    }
    const close = value.indexOf(CLOSE, i);
    if (close < 0) return { references, malformed: 'has a "{{ secret." that is not closed with "}}"' };
    const name = value.slice(i + KEYWORD.length, close).trimEnd();
    if (name.length === 0 || name.length > SECRET_NAME_MAX || !NAME.test(name)) {
      return {
        references,
        malformed: `has a secret reference whose name ${JSON.stringify(name.slice(0, 40))} is not letters, digits and underscores (not starting with a digit); write {{ secret.NAME }}`,
      };
    }
    references.push({ start: at, end: close + CLOSE.length, name });
    at = value.indexOf(OPEN, close + CLOSE.length);
  }
  return { references };
}

/** What is wrong with each malformed secret reference of an env (its string values), by key. */
export function malformedReferences(env: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(env)) {
    const malformed = typeof value === 'string' ? referencesIn(value).malformed : undefined;
    if (malformed) errors.push({ path: `/env/${escapePointer(key)}`, message: malformed });
  }
  return errors;
}

/** Refuses an env with a malformed secret reference (400 naming each such key). Every template is checked. */
export function checkReferences(env: Record<string, string>): void {
  const errors = malformedReferences(env);
  if (errors.length > 0) {
    throw invalid(`Malformed secret references in env: ${errors.map((e) => e.path.slice(5)).join(', ')}.`, errors);
  }
}

/** What a public template holding a token in its start command or entrypoint is told to do instead. */
const IN_COMMAND = (name: string) =>
  `holds what looks like ${name} in a public template; store it as a secret, put {{ secret.NAME }} in the env, ` +
  'and use the variable here ("$NAME", through a shell)';

/**
 * Refuses a public template whose env, start command or entrypoint holds a literal token of a well-known format (400
 * naming each such env key or command element): a public template is readable by everyone. Private templates are not
 * scanned. Linear in the size of what is scanned. (The readme is not: its examples look like tokens.)
 */
export function scanPublicEnv(template: {
  isPublic: boolean;
  env: Record<string, string>;
  dockerStartCmd?: readonly string[];
  dockerEntrypoint?: readonly string[];
}): void {
  if (!template.isPublic) return;
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(template.env)) {
    const token = firstToken(value);
    if (token) {
      errors.push({
        path: `/env/${escapePointer(key)}`,
        message: `holds what looks like ${token.format.name} in a public template; store it as a secret and write {{ secret.${key} }} instead`,
      });
    }
  }
  for (const field of ['dockerEntrypoint', 'dockerStartCmd'] as const) {
    for (const [i, arg] of (template[field] ?? []).entries()) {
      const token = firstToken(arg);
      if (token) errors.push({ path: `/${field}/${i}`, message: IN_COMMAND(token.format.name) });
    }
  }
  if (errors.length > 0) {
    throw invalid(
      `A public template is readable by everyone, and it holds what looks like a token: ${errors.map((e) => e.path.slice(1)).join(', ')}. ` +
        'Store the value as a secret of your account and refer to it as {{ secret.NAME }} in the env.',
      errors,
    );
  }
}

/** The names of every secret `env` refers to, each once, in the order of first use. */
export function referencedNames(env: Record<string, string>): string[] {
  const names = new Set<string>();
  for (const value of Object.values(env)) for (const r of referencesIn(value).references) names.add(r.name);
  return [...names];
}

/** A template that can't be resolved for the launching account: the secrets it refers to that the account lacks. */
export class MissingSecrets extends DomainError {
  readonly missing: string[];

  constructor(missing: string[]) {
    super(
      'unresolvable',
      `The launching account has no secret named ${missing.join(', ')}, which the template's env refers to; ` +
        'it must set them (as secrets of that account) before launching.',
    );
    this.missing = missing;
  }
}

/**
 * `env` with each reference replaced by the value of the secret it names, from `values` (the launching account's). A
 * MissingSecrets listing every name `values` lacks; refused as well when the result would pass RESOLVED_ENV_MAX bytes.
 */
export function resolveEnv(env: Record<string, string>, values: ReadonlyMap<string, string>): Record<string, string> {
  const missing = referencedNames(env).filter((name) => !values.has(name));
  if (missing.length > 0) throw new MissingSecrets(missing);
  const resolved: Record<string, string> = {};
  let bytes = 0;
  for (const [key, value] of Object.entries(env)) {
    const { references } = referencesIn(value);
    let text = '';
    let at = 0;
    // Every byte of the result counts, the text around the references too; checked before each piece is added.
    const add = (n: number) => {
      bytes += n;
      if (bytes > RESOLVED_ENV_MAX) {
        throw new DomainError(
          'unresolvable',
          `The template's env, with its secret references replaced, would pass ${RESOLVED_ENV_MAX} bytes at ${key}.`,
        );
      }
    };
    for (const r of references) {
      const secret = values.get(r.name) as string;
      add(Buffer.byteLength(secret) + Buffer.byteLength(value.slice(at, r.start)));
      text += value.slice(at, r.start) + secret;
      at = r.end;
    }
    add(Buffer.byteLength(value.slice(at)));
    resolved[key] = at === 0 ? value : text + value.slice(at);
  }
  return resolved;
}

export const ResolveInput = Type.Object(
  {
    account: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: STORABLE_TEXT,
      errorMessage: STORABLE_TEXT_MESSAGE,
      description:
        'The launching account, named as `podplate keys create --user` named it: its secrets fill the references. An ' +
        'account that does not exist is a 400.',
      examples: ['alice'],
    }),
    revision: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "The template's revision the launching user saw and chose: resolved only if the template is still at it (else " +
          "412), so a change made since — a reference added to another of the user's secrets — reaches no launch unseen.",
        examples: [3],
      }),
    ),
  },
  { additionalProperties: false, $id: 'ResolveInput', title: 'ResolveInput' },
);
export type ResolveInput = Static<typeof ResolveInput>;

/** What a launch needs of a template: its fields, its env resolved, and the registry credentials when they are the launcher's. */
export const ResolvedTemplateSchema = Type.Object(
  {
    template: Type.Object(
      {
        ...Template.properties,
        env: Type.Unsafe<Record<string, string>>({
          type: 'object',
          additionalProperties: { type: 'string' },
          description: `The env with each \`{{ secret.NAME }}\` replaced by the launching account's secret NAME (at most ${RESOLVED_ENV_MAX} bytes in all).`,
        }),
      },
      { additionalProperties: false, description: 'The template, its env resolved. Never store or log it.' },
    ),
    containerRegistryCredentials: Type.Union([Type.Ref(RegistryAuthCredentials), Type.Null()], {
      description: 'The registry credentials, when the launching account owns the template and it names a registry auth; else null.',
    }),
    imageDigest: Type.Union([Type.String({ pattern: '^sha256:[a-f0-9]{64}$' }), Type.Null()], {
      description:
        "The digest the template's revision is pinned to: start `<image name without tag>@<imageDigest>`, so that every " +
        'Pod and worker runs the image its check verified; null until a check has verified one (start the tag).',
    }),
  },
  { additionalProperties: false, $id: 'ResolvedTemplate', title: 'ResolvedTemplate' },
);
