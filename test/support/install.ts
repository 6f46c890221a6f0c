import assert from 'node:assert/strict';
import type { Harness } from './harness.ts';

// An install with a bit of everything, made through the API, and everything the API answers about it: what an
// export and import must keep, seen from outside.

export interface Install {
  /** Every key made, by name (a revoked one included). */
  keys: Record<string, string>;
  templateIds: string[];
  endpointIds: string[];
  /** A read-only key that expires, made over the API. */
  readOnlyKey: string;
}

const FLAGS = ['includePublicTemplates', 'includePlatformTemplates', 'includeEndpointBoundTemplates'] as const;
const FILTERS = ['', '&category=AMD', '&isServerless=true', '&isServerless=false', '&q=pytorch', '&category=NVIDIA&isServerless=false&q=o'];

async function ok(
  h: Harness,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  key: string,
  body?: unknown,
  headers?: Record<string, string>,
) {
  const r = await h.call(method, url, { key, body, headers });
  assert.ok(r.status < 300, `${method} ${url}: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * Accounts, keys (one revoked), templates of every kind with history, endpoints with releases, usage, kept responses,
 * and secrets with a public template that refers to them.
 */
export async function populate(h: Harness): Promise<Install> {
  const keys: Record<string, string> = {
    alice: await h.key('alice'),
    bob: await h.key('bob'),
    carol: await h.key('carol'),
    ops: await h.key('ops', 'platform'),
  };
  const revoked = await h.podplate.keys.create('bob', 'user');
  await h.podplate.keys.revoke(revoked.id);
  keys.revoked = revoked.secret;

  const templateIds: string[] = [];
  const create = async (owner: string, body: Record<string, unknown>, headers?: Record<string, string>) => {
    const t = await ok(h, 'POST', '/v1/templates', keys[owner] as string, body, headers);
    templateIds.push(t.id);
    return t.id as string;
  };
  const categories = ['NVIDIA', 'AMD', 'CPU'];
  for (const [n, owner] of ['alice', 'bob', 'carol', 'ops'].entries()) {
    for (let i = 0; i < 6; i++) {
      await create(owner, {
        name: `${owner} ${i} ${i % 2 ? 'pytorch' : 'stable diffusion'}`,
        imageName: i % 3 ? `runpod/pytorch:2.${i}.${n}` : `acme/sd-worker:1.${i}`,
        category: categories[(i + n) % 3],
        isPublic: i % 2 === 0,
        isServerless: i % 3 === 1,
        env: { ROUND: `${n}.${i}`, EMPTY: '' },
        ports: i % 2 ? ['8888/http', '22/tcp'] : [],
        dockerStartCmd: i === 5 ? ['python', '-m', 'server'] : [],
        readme: i === 0 ? '# Über\n\nUnicode ✓, "quotes", \\ backslashes, a tab\there.' : '',
      });
    }
  }
  // An Idempotency-Key kept with its response.
  await create('alice', { name: 'kept response', imageName: 'ubuntu' }, { 'idempotency-key': 'create-kept-1' });
  // History: updates, a rollback; a deleted template leaves a gap in the order.
  const [a0, a1, a2] = templateIds as [string, string, string];
  await ok(h, 'POST', `/v1/templates/${a0}/update`, keys.alice as string, { imageName: 'runpod/pytorch:3.0', isPublic: false });
  await ok(h, 'POST', `/v1/templates/${a0}/update`, keys.alice as string, { env: { ROUND: 'two' }, readme: 'changed' });
  await ok(h, 'POST', `/v1/templates/${a0}/rollback`, keys.alice as string, { revision: 1 }, { 'idempotency-key': 'rollback-1' });
  await ok(h, 'DELETE', `/v1/templates/${a2}`, keys.alice as string);

  // Endpoints and releases: a serverless template bound, changed twice (the first release superseded), progress.
  const endpointIds: string[] = [];
  for (const owner of ['alice', 'ops']) {
    const t = await create(owner, { name: `${owner} worker`, imageName: 'acme/worker:1.0', isServerless: true, isPublic: true });
    const e = await ok(h, 'POST', '/v1/endpoints', keys[owner] as string, {
      name: `${owner} endpoint`,
      templateId: t,
      workersMin: 1,
      workersMax: 3,
    });
    endpointIds.push(e.id);
    await ok(h, 'POST', `/v1/templates/${t}/update`, keys[owner] as string, { imageName: 'acme/worker:1.1' });
    await ok(h, 'POST', `/v1/templates/${t}/update`, keys[owner] as string, { imageName: 'acme/worker:1.2' });
    const releases = await ok(h, 'GET', `/v1/endpoints/${e.id}/releases`, keys[owner] as string);
    await ok(h, 'POST', `/v1/endpoints/${e.id}/releases/${releases[0].id}/progress`, keys.ops as string, {
      status: 'rolling',
      workersUpdated: 1,
      workersTotal: 3,
    });
  }
  // The outbox: one event delivered, one failed and waiting for its retry, the rest pending.
  const claimed = await h.store.transaction((tx) =>
    tx.outbox.claimDue(new Date().toISOString(), new Date(Date.now() + 60_000).toISOString(), 'lease-1', 2),
  );
  assert.equal(claimed.length, 2);
  await h.store.transaction((tx) => tx.outbox.markDelivered((claimed[0] as { seq: number }).seq, 'lease-1', new Date().toISOString()));
  await h.store.transaction((tx) =>
    tx.outbox.markFailed((claimed[1] as { seq: number }).seq, 'lease-1', 'HTTP 502', new Date(Date.now() + 3_600_000).toISOString()),
  );

  // Usage, counted once per usageId.
  for (const [i, id] of [a1, templateIds[7], templateIds[19]].entries()) {
    await ok(h, 'POST', `/v1/templates/${id}/usage`, keys.ops as string, {
      usageId: `pod-${i}`,
      runtimeInMin: 90 + i,
      earned: 1.25 + i / 3,
    });
  }
  // Secrets, sealed: each of alice and bob has their own HF_TOKEN; a public template of alice's refers to it.
  for (const owner of ['alice', 'bob']) {
    await ok(h, 'PUT', '/v1/secrets/HF_TOKEN', keys[owner] as string, { value: `hf-value-of-${owner}` });
    await ok(h, 'PUT', '/v1/secrets/SPARE', keys[owner] as string, { value: `spare of ${owner} ✓` });
  }
  await create('alice', { name: 'needs a token', imageName: 'acme/sdxl:1', isPublic: true, env: { HF_TOKEN: '{{ secret.HF_TOKEN }}' } });
  // A read-only, expiring key with a label, made over the API: its access and expiry travel with it.
  const readOnly = await ok(h, 'POST', '/v1/accounts/carol/keys', keys.carol as string, {
    label: 'dashboard',
    access: 'read',
    expiresAt: '2999-01-01T00:00:00.000Z',
  });
  return { keys, templateIds, endpointIds, readOnlyKey: readOnly.key };
}

/** Everything the API answers about the install, for every key: what two installs must agree on. */
export async function observe(h: Harness, install: Install): Promise<string[]> {
  const seen: string[] = [];
  const look = async (url: string, key: string) => {
    const r = await h.call('GET', url, { key });
    seen.push(`${url} ${r.status} etag=${r.headers.etag ?? ''} link=${r.headers.link ?? ''}\n${r.text}`);
    return r;
  };
  for (const [name, key] of Object.entries(install.keys)) {
    seen.push(`--- as ${name}`);
    for (let combo = 0; combo < 8; combo++) {
      const flags = FLAGS.map((f, i) => `${f}=${(combo >> i) & 1 ? 'true' : 'false'}`).join('&');
      for (const id of install.templateIds) await look(`/v1/templates/${id}?${flags}`, key);
      for (const filter of FILTERS) {
        let url: string | undefined = `/v1/templates?${flags}${filter}&limit=4`;
        for (let pages = 0; url && pages < 50; pages++) {
          const r = await look(url, key);
          url = /<([^>]+)>;\s*rel="next"/.exec(String(r.headers.link ?? ''))?.[1];
        }
      }
    }
    for (const id of install.templateIds) {
      let url: string | undefined = `/v1/templates/${id}/revisions?limit=2`;
      while (url) url = /<([^>]+)>;\s*rel="next"/.exec(String((await look(url, key)).headers.link ?? ''))?.[1];
    }
    await look('/v1/endpoints', key);
    await look('/v1/secrets', key);
    for (const id of install.endpointIds) {
      await look(`/v1/endpoints/${id}`, key);
      let url: string | undefined = `/v1/endpoints/${id}/releases?limit=1`;
      while (url) url = /<([^>]+)>;\s*rel="next"/.exec(String((await look(url, key)).headers.link ?? ''))?.[1];
    }
  }
  // The read-only key is still read-only, and expires when it did.
  await look('/v1/me', install.readOnlyKey);
  const refused = await h.call('POST', '/v1/templates', { key: install.readOnlyKey, body: { name: 'refused', imageName: 'ubuntu' } });
  seen.push(`read-only create ${refused.status}`);
  // The platform resolves the template that needs a token for each account: the secrets open in the copy too.
  const needs = install.templateIds[install.templateIds.length - 1] as string;
  for (const account of ['alice', 'bob', 'carol']) {
    const r = await h.call('POST', `/v1/templates/${needs}/resolve`, { key: install.keys.ops, body: { account } });
    seen.push(`resolve for ${account} ${r.status}\n${r.text}`);
  }
  return seen;
}
