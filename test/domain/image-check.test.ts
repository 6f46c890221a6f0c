import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cudaVersionOf, failedCheck, GB, imageAfterChange, judge, registryText, uncheckedImage } from '../../src/domain/image-check.ts';
import { imageLocation } from '../../src/domain/image-reference.ts';
import { templateJson, withoutRegistryAuth } from '../../src/domain/template.ts';
import { templateRecord } from '../support/records.ts';

// The image check's pure rules: where a reference points, the verdict and its reasons, and what a change does to the
// check and the revision's pin.

const at = '2026-11-27T10:00:00.000Z';
const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

test('references are located as Docker reads them: Docker Hub, official images, latest', () => {
  assert.deepEqual(imageLocation('busybox'), { registry: 'docker.io', repository: 'library/busybox', tag: 'latest', digest: null });
  assert.deepEqual(imageLocation('runpod/pytorch:2.1.0'), {
    registry: 'docker.io',
    repository: 'runpod/pytorch',
    tag: '2.1.0',
    digest: null,
  });
  assert.deepEqual(imageLocation('index.docker.io/library/ubuntu:24.04').registry, 'docker.io');
  assert.deepEqual(imageLocation(`ghcr.io/acme/app:1.0@${A}`), { registry: 'ghcr.io', repository: 'acme/app', tag: '1.0', digest: A });
  assert.deepEqual(imageLocation('localhost:5000/app'), { registry: 'localhost:5000', repository: 'app', tag: 'latest', digest: null });
  assert.deepEqual(imageLocation('nvcr.io/nvidia/pytorch:24.01-py3').repository, 'nvidia/pytorch');
});

test('verified needs a linux/amd64 image that fits the disk; each failure says why', () => {
  const facts = { digest: A, platforms: ['linux/amd64'], sizeBytes: 5 * GB, cudaVersion: '12.4.1' };
  assert.deepEqual(judge(facts, 50, at), { ...facts, checkedAt: at, status: 'verified', reason: null });
  assert.equal(judge({ ...facts, platforms: ['linux/amd64/v3'] }, 50, at).status, 'verified');
  const arm = judge({ ...facts, platforms: ['linux/arm64', 'linux/arm/v7'], sizeBytes: null }, 50, at);
  assert.equal(arm.reason, 'The image has no linux/amd64 image (it has linux/arm64, linux/arm/v7): Pods and workers run on linux/amd64.');
  const large = judge({ ...facts, sizeBytes: Math.round(23.6 * GB) }, 20, at);
  assert.equal(large.status, 'failed');
  assert.match(large.reason ?? '', /^The image's compressed layers \(23\.6 GB\) exceed containerDiskInGb \(20 GB\)/);
});

test('registry failures: actionable reasons, unreachable kept apart', () => {
  const image = { imageName: 'ghcr.io/acme/app:1', registryAuthName: null, digest: null };
  assert.match(failedCheck({ kind: 'not-found' }, image, at).reason ?? '', /no image ghcr\.io\/acme\/app:1: no such repository or tag/);
  assert.match(failedCheck({ kind: 'denied', given: false }, image, at).reason ?? '', /names no registry auth/);
  const named = failedCheck({ kind: 'denied', given: true }, { ...image, registryAuthName: 'ghcr' }, at);
  assert.equal(named.reason, 'The registry refused the credentials of registry auth "ghcr": check its username and password.');
  const down = failedCheck(
    { kind: 'unreachable', reason: 'The registry at ghcr.io answered HTTP 503; the check is retried later.' },
    image,
    at,
  );
  assert.equal(down.status, 'unreachable');
  assert.match(failedCheck({ kind: 'not-found' }, { ...image, digest: A }, at).reason ?? '', /no longer has .* at its pinned digest/);
});

test("others see a refusal of the owner's credentials without the auth's name", () => {
  const reason = failedCheck({ kind: 'denied', given: true }, { imageName: 'x', registryAuthName: 'my secret auth', digest: null }, at);
  const t = templateRecord({ containerRegistryAuthId: 'auth_1', imageCheck: reason });
  const shown = JSON.parse(withoutRegistryAuth(templateJson(t), 'auth_1'));
  assert.equal(shown.imageCheck.reason, "The registry refused the credentials of the template's registry auth.");
  assert.doesNotMatch(JSON.stringify(shown), /my secret auth/);
});

test('CUDA version: CUDA_VERSION in the env first, else the com.nvidia.cuda.version label', () => {
  assert.equal(cudaVersionOf({ Env: ['PATH=/x', 'CUDA_VERSION=12.1.0'], Labels: { 'com.nvidia.cuda.version': '11' } }), '12.1.0');
  assert.equal(cudaVersionOf({ Env: ['PATH=/x'], Labels: { 'com.nvidia.cuda.version': '11.8.0' } }), '11.8.0');
  assert.equal(cudaVersionOf({ Env: 'not a list' }), null);
  assert.equal(cudaVersionOf(undefined), null);
});

test("a registry's text is kept without control or format characters, and short: it reaches terminals and databases", () => {
  assert.equal(cudaVersionOf({ Env: ['CUDA_VERSION=12.\u0000\u001b[31m4\u202e.1'] }), '12.[31m4.1');
  assert.equal(cudaVersionOf({ Env: ['CUDA_VERSION=\u0000'], Labels: { 'com.nvidia.cuda.version': '\u200f' } }), null);
  assert.equal(registryText('😀'.repeat(100), 64), '😀'.repeat(64));
});

test('what a change does to the check: a new image checks anew unpinned, new credentials recheck, a new disk is judged again', () => {
  const verified = judge({ digest: A, platforms: ['linux/amd64'], sizeBytes: 30 * GB, cudaVersion: null }, 50, at);
  const before = { imageName: 'app:1', containerRegistryAuthId: '', containerDiskInGb: 50, imageCheck: verified };
  const renamed = imageAfterChange(before, { ...before, imageName: 'app:2' }, A, undefined, true);
  assert.deepEqual([renamed.imageCheck.status, renamed.pin, renamed.recheck, renamed.digestChange], ['pending', null, true, undefined]);
  const auth = imageAfterChange(before, { ...before, containerRegistryAuthId: 'a1' }, A, undefined, true);
  assert.deepEqual([auth.imageCheck.status, auth.pin, auth.recheck], ['pending', A, true]);
  const smaller = imageAfterChange(before, { ...before, containerDiskInGb: 20 }, A, undefined, true);
  assert.deepEqual([smaller.imageCheck.status, smaller.recheck, smaller.pin], ['failed', false, A]);
  const readme = imageAfterChange(before, before, A, undefined, true);
  assert.deepEqual([readme.imageCheck, readme.pin, readme.recheck], [verified, A, false]);
  const rollback = imageAfterChange(before, before, B, A, true);
  assert.deepEqual([rollback.pin, rollback.recheck, rollback.digestChange], [A, true, { field: 'imageDigest', from: B, to: A }]);
  assert.equal(imageAfterChange(before, { ...before, imageName: 'app:2' }, A, undefined, false).imageCheck.status, 'off');
  assert.deepEqual(uncheckedImage(true, A).digest, A);
});
