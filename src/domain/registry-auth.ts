import { type Static, Type } from '@sinclair/typebox';
import { conflict, invalid } from './errors.ts';
import { NO_CONTROL_CHARACTERS, newNameSchema } from './name.ts';
import { STORABLE_TEXT, STORABLE_TEXT_MESSAGE } from './text.ts';
import type { Caller } from './visibility.ts';

// Container registry auths: the credentials the platform pulls a private image with. A template refers to one of its
// owner's by id; the password is given once, kept sealed, and read back by platform keys alone.

export const PASSWORD_MAX = 16384;

export const RegistryAuthCreate = Type.Object(
  {
    name: newNameSchema('A name for these credentials, unique among your registry auths.'),
    username: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: NO_CONTROL_CHARACTERS,
      errorMessage: 'must not contain control characters',
      description: 'The user name for the registry (for some registries a fixed word, such as `_json_key` or `AWS`).',
      examples: ['my-username'],
    }),
    password: Type.String({
      minLength: 1,
      maxLength: PASSWORD_MAX,
      pattern: STORABLE_TEXT,
      errorMessage: STORABLE_TEXT_MESSAGE,
      writeOnly: true,
      description: `The password or access token for the registry, at most ${PASSWORD_MAX} characters. Stored encrypted; never shown again.`,
      examples: ['my-password'],
    }),
  },
  { additionalProperties: false, $id: 'ContainerRegistryAuthCreateInput', title: 'ContainerRegistryAuthCreateInput' },
);
export type RegistryAuthCreate = Static<typeof RegistryAuthCreate>;

export const RegistryAuth = Type.Object(
  {
    id: Type.String({ description: 'Unique identifier of the registry auth: what a template names in `containerRegistryAuthId`.' }),
    name: Type.String({ description: 'The name given at creation.' }),
    createdAt: Type.String({ format: 'date-time', description: 'When it was created (ISO 8601).' }),
  },
  {
    $id: 'ContainerRegistryAuth',
    title: 'ContainerRegistryAuth',
    additionalProperties: false,
    description: 'Credentials for a container registry, as shown to their owner: never the password.',
  },
);
export type RegistryAuth = Static<typeof RegistryAuth>;

export const RegistryAuthCredentials = Type.Object(
  {
    username: Type.String(),
    password: Type.String(),
  },
  {
    $id: 'ContainerRegistryAuthCredentials',
    title: 'ContainerRegistryAuthCredentials',
    additionalProperties: false,
    description: 'What the platform logs in to the registry with, to pull the image.',
  },
);
export type RegistryAuthCredentials = Static<typeof RegistryAuthCredentials>;

/** A registry auth as stored, but for its password. */
export interface RegistryAuthRecord extends RegistryAuth {
  ownerId: string;
  username: string;
}

/** As stored: with the password sealed (see sealing/keyring.ts), never in plain text. */
export interface SealedRegistryAuth extends RegistryAuthRecord {
  sealedPassword: string;
}

export const shownRegistryAuth = ({ id, name, createdAt }: RegistryAuthRecord): RegistryAuth => ({ id, name, createdAt });

export const registryAuthNameTaken = () =>
  conflict('You already have a registry auth with this name.', [
    { path: '/name', message: 'is already the name of another of your registry auths' },
  ]);

/** The same answer whether the id names nothing or somebody else's auth: a template can't probe for them. */
export const notYourRegistryAuth = () =>
  invalid('containerRegistryAuthId must be "" or the id of one of your registry auths.', [
    { path: '/containerRegistryAuthId', message: 'is not the id of a registry auth of yours; "" for none' },
  ]);

/**
 * Who sees a template's containerRegistryAuthId: its owner, and platform keys (the launcher, which reads the
 * credentials themselves). Anyone else sees "": an id of somebody's credentials is nobody else's business.
 */
export const seesRegistryAuth = (caller: Pick<Caller, 'accountId' | 'role'>, ownerId: string): boolean =>
  caller.accountId === ownerId || caller.role === 'platform';
