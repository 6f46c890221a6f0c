import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Role } from '../../src/domain/account.ts';
import { type IncludeFlags, isVisible, type VisibleFacts, visibilityFor, widestVisibility } from '../../src/domain/visibility.ts';

// docs/api.md, "What a caller sees", as an oracle written from the table's words. The table is
// silent on a bound official template; the table of docs/api.md decides: "if bound, also includeEndpointBoundTemplates".

type Kind =
  | 'own unbound'
  | 'own bound'
  | "other's public"
  | "other's public bound"
  | "other's private"
  | 'official public'
  | 'official public bound'
  | 'official private'
  | 'official private bound';

const KINDS: Kind[] = [
  'own unbound',
  'own bound',
  "other's public",
  "other's public bound",
  "other's private",
  'official public',
  'official public bound',
  'official private',
  'official private bound',
];

const CALLER = { user: 'acc_caller_user', platform: 'acc_caller_platform' } as const;
const OTHER_USER = 'acc_other_user';
const PLATFORM_OWNER = 'acc_platform_owner';

/** The facts of a template of `kind`, as seen by a caller of `role`. A platform key's own templates are official. */
function factsOf(kind: Kind, role: Role, isPublic: boolean): VisibleFacts {
  const caller = CALLER[role];
  switch (kind) {
    case 'own unbound':
      return { ownerId: caller, isPublic, isPlatform: role === 'platform', bound: false };
    case 'own bound':
      return { ownerId: caller, isPublic, isPlatform: role === 'platform', bound: true };
    case "other's public":
      return { ownerId: OTHER_USER, isPublic: true, isPlatform: false, bound: false };
    case "other's public bound":
      return { ownerId: OTHER_USER, isPublic: true, isPlatform: false, bound: true };
    case "other's private":
      return { ownerId: OTHER_USER, isPublic: false, isPlatform: false, bound: false };
    case 'official public':
      return { ownerId: PLATFORM_OWNER, isPublic: true, isPlatform: true, bound: false };
    case 'official public bound':
      return { ownerId: PLATFORM_OWNER, isPublic: true, isPlatform: true, bound: true };
    case 'official private':
      return { ownerId: PLATFORM_OWNER, isPublic: false, isPlatform: true, bound: false };
    case 'official private bound':
      return { ownerId: PLATFORM_OWNER, isPublic: false, isPlatform: true, bound: true };
  }
}

/** The table, row by row. */
function oracle(kind: Kind, role: Role, flags: Required<IncludeFlags>): boolean {
  const bound = flags.includeEndpointBoundTemplates;
  const official = flags.includePlatformTemplates || role === 'platform';
  switch (kind) {
    case 'own unbound': // always
      return true;
    case 'own bound': // includeEndpointBoundTemplates=true
      return bound;
    case "other's public": // includePublicTemplates=true
      return flags.includePublicTemplates;
    case "other's public bound": // ... if bound, also includeEndpointBoundTemplates
      return flags.includePublicTemplates && bound;
    case "other's private": // never
      return false;
    case 'official public': // includePlatformTemplates=true, or the caller is a platform key
      return official;
    case 'official public bound': // ... if bound, also includeEndpointBoundTemplates (docs/api.md)
      return official && bound;
    case 'official private': // platform keys only
      return role === 'platform';
    case 'official private bound': // ... if bound, also includeEndpointBoundTemplates
      return role === 'platform' && bound;
  }
}

const FLAG_SETS: Required<IncludeFlags>[] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ({
  includeEndpointBoundTemplates: (n & 1) !== 0,
  includePublicTemplates: (n & 2) !== 0,
  includePlatformTemplates: (n & 4) !== 0,
}));

test('a template is visible exactly where the table says (9 kinds x 2 roles x 8 flag sets, own ones private and public)', () => {
  let checked = 0;
  let seen = 0;
  for (const role of ['user', 'platform'] as const) {
    for (const flags of FLAG_SETS) {
      const visibility = visibilityFor({ accountId: CALLER[role], role }, flags);
      for (const kind of KINDS) {
        // The caller's own templates, private and public alike (a platform key's own are official).
        for (const isPublic of kind.startsWith('own') ? [false, true] : [true]) {
          const expected = oracle(kind, role, flags);
          assert.equal(isVisible(visibility, factsOf(kind, role, isPublic)), expected, `${role} ${kind} ${JSON.stringify(flags)}`);
          checked++;
          if (expected) seen++;
        }
      }
    }
  }
  // Each role: 8 flag sets x (2 own kinds x 2 publicities + 7 others).
  assert.equal(checked, 2 * 8 * 11);
  // Counted by hand from the table: user 16 + 8 + 4 + 2 + 0 + 4 + 2 + 0 + 0, platform 16 + 8 + 4 + 2 + 0 + 8 + 4 + 8 + 4.
  assert.equal(seen, 36 + 54);
});

test('with no flags a user sees only its own unbound templates, and a platform key also official unbound ones', () => {
  const visibleKinds = (role: Role) =>
    KINDS.filter((kind) => isVisible(visibilityFor({ accountId: CALLER[role], role }, {}), factsOf(kind, role, true)));
  assert.deepEqual(visibleKinds('user'), ['own unbound']);
  assert.deepEqual(visibleKinds('platform'), ['own unbound', 'official public', 'official private']);
});

test("a private official template is the platform's alone: no flag shows it to a user", () => {
  const user = visibilityFor(
    { accountId: CALLER.user, role: 'user' },
    { includeEndpointBoundTemplates: true, includePublicTemplates: true, includePlatformTemplates: true },
  );
  assert.equal(isVisible(user, factsOf('official private', 'user', true)), false);
  assert.equal(isVisible(user, factsOf('official private bound', 'user', true)), false);
  const platform = visibilityFor({ accountId: CALLER.platform, role: 'platform' }, {});
  assert.equal(isVisible(platform, factsOf('official private', 'platform', true)), true);
});

test('the public flag does not bring in official templates, and the platform flag does not bring in community ones', () => {
  const user = { accountId: CALLER.user, role: 'user' as const };
  const publicOnly = visibilityFor(user, { includePublicTemplates: true });
  assert.equal(isVisible(publicOnly, factsOf('official public', 'user', true)), false);
  assert.equal(isVisible(publicOnly, factsOf("other's public", 'user', true)), true);
  const platformOnly = visibilityFor(user, { includePlatformTemplates: true });
  assert.equal(isVisible(platformOnly, factsOf('official public', 'user', true)), true);
  assert.equal(isVisible(platformOnly, factsOf("other's public", 'user', true)), false);
});

test('visibilityFor sets a flag only when it is exactly true, and a platform key always includes official templates', () => {
  assert.deepEqual(visibilityFor({ accountId: 'acc_a', role: 'user' }, {}), {
    ownerId: 'acc_a',
    bound: false,
    public: false,
    platform: false,
    platformKey: false,
  });
  assert.deepEqual(
    visibilityFor(
      { accountId: 'acc_a', role: 'user' },
      { includeEndpointBoundTemplates: false, includePublicTemplates: false, includePlatformTemplates: false },
    ),
    { ownerId: 'acc_a', bound: false, public: false, platform: false, platformKey: false },
  );
  assert.deepEqual(
    visibilityFor(
      { accountId: 'acc_a', role: 'user' },
      { includeEndpointBoundTemplates: true, includePublicTemplates: true, includePlatformTemplates: true },
    ),
    { ownerId: 'acc_a', bound: true, public: true, platform: true, platformKey: false },
  );
  assert.deepEqual(visibilityFor({ accountId: 'acc_p', role: 'platform' }, { includePlatformTemplates: false }), {
    ownerId: 'acc_p',
    bound: false,
    public: false,
    platform: true,
    platformKey: true,
  });
});

test('the widest visibility is every flag set, for the caller itself, whatever its role', () => {
  for (const role of ['user', 'platform'] as const) {
    const caller = { accountId: CALLER[role], role, keyId: 'key_1', access: 'read-write' as const };
    const widest = widestVisibility(caller);
    assert.deepEqual(widest, { ownerId: CALLER[role], bound: true, public: true, platform: true, platformKey: role === 'platform' });
    assert.deepEqual(
      widest,
      visibilityFor(caller, { includeEndpointBoundTemplates: true, includePublicTemplates: true, includePlatformTemplates: true }),
    );
  }
});

test("the widest visibility shows every kind of template but another account's private one", () => {
  for (const role of ['user', 'platform'] as const) {
    const widest = widestVisibility({ accountId: CALLER[role], role, keyId: 'key_1', access: 'read-write' as const });
    const hidden = KINDS.filter((kind) => !isVisible(widest, factsOf(kind, role, true)));
    assert.deepEqual(
      hidden,
      role === 'user' ? ["other's private", 'official private', 'official private bound'] : ["other's private"],
      role,
    );
  }
  const user = widestVisibility({ accountId: CALLER.user, role: 'user', keyId: 'key_1', access: 'read-write' as const });
  assert.equal(isVisible(user, factsOf('own bound', 'user', false)), true);
});
