import type { Access, Role } from './account.ts';

// Who sees which template (docs/api.md, "What a caller sees"). One rule, applied to a single
// template here and translated to SQL by the store for lists.

export interface Caller {
  accountId: string;
  role: Role;
  /** The API key the caller used: recorded with every revision it makes. */
  keyId: string;
  /** What the key may do: a `read` key makes no change (every write is a 403). */
  access: Access;
}

export interface IncludeFlags {
  includeEndpointBoundTemplates?: boolean;
  includePublicTemplates?: boolean;
  includePlatformTemplates?: boolean;
}

/** What a caller may see, resolved from its role and the include flags. */
export interface Visibility {
  ownerId: string;
  /** Templates bound to an endpoint are included (own and others' alike). */
  bound: boolean;
  /** Other accounts' public, community-made (not official) templates are included. */
  public: boolean;
  /** Official (platform) templates are included: public ones, and private ones for platform keys. */
  platform: boolean;
  /** The caller is a platform key: private official templates are the platform's alone. */
  platformKey: boolean;
}

export interface VisibleFacts {
  ownerId: string;
  isPublic: boolean;
  isPlatform: boolean;
  bound: boolean;
}

export function visibilityFor(caller: Pick<Caller, 'accountId' | 'role'>, flags: IncludeFlags): Visibility {
  return {
    ownerId: caller.accountId,
    bound: flags.includeEndpointBoundTemplates === true,
    public: flags.includePublicTemplates === true,
    platform: flags.includePlatformTemplates === true || caller.role === 'platform',
    platformKey: caller.role === 'platform',
  };
}

/** Everything a caller could see with every flag set: the test for "exists, but not yours" (403, not 404). */
export function widestVisibility(caller: Caller): Visibility {
  return { ownerId: caller.accountId, bound: true, public: true, platform: true, platformKey: caller.role === 'platform' };
}

export function isVisible(v: Visibility, t: VisibleFacts): boolean {
  if (t.bound && !v.bound) return false;
  if (t.ownerId === v.ownerId) return true;
  // Official templates are not "community-made": the public flag does not bring them in. A private one is the
  // platform's own: seen by platform keys only.
  if (t.isPlatform) return v.platform && (t.isPublic || v.platformKey);
  return t.isPublic && v.public;
}

/** Whether only the bound flag hides `t` from its owner: the one case where a 404 may say why (it is the caller's). */
export const hiddenOnlyByBinding = (caller: Pick<Caller, 'accountId'>, flags: IncludeFlags, t: VisibleFacts): boolean =>
  t.bound && t.ownerId === caller.accountId && flags.includeEndpointBoundTemplates !== true;
