import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RELEASE_STATUSES } from '../../src/domain/endpoint.ts';
import { progressProblem, type ReleaseProgress } from '../../src/releases/release.ts';

// docs/api.md, "Releases and webhooks": platform keys report progress { status: rolling|completed|failed, workersUpdated, workersTotal }.

const PROGRESS: ReleaseProgress[] = (['rolling', 'completed', 'failed'] as const).flatMap((status) => [
  { status, workersUpdated: 0, workersTotal: 0 },
  { status, workersUpdated: 0, workersTotal: 3 },
  { status, workersUpdated: 2, workersTotal: 3 },
  { status, workersUpdated: 3, workersTotal: 3 },
  { status, workersUpdated: 100_000, workersTotal: 100_000 },
]);

test('the release statuses are pending, rolling, completed, failed and superseded, in that order', () => {
  assert.deepEqual([...RELEASE_STATUSES], ['pending', 'rolling', 'completed', 'failed', 'superseded']);
});

test('a pending or rolling release takes any progress with at most workersTotal workers updated', () => {
  for (const current of ['pending', 'rolling'] as const) {
    for (const progress of PROGRESS) assert.equal(progressProblem(current, progress), undefined, `${current} ${JSON.stringify(progress)}`);
  }
});

test('a completed, failed or superseded release changes no more, whatever the progress', () => {
  for (const current of ['completed', 'failed', 'superseded'] as const) {
    for (const progress of [...PROGRESS, { status: 'rolling' as const, workersUpdated: 5, workersTotal: 1 }]) {
      assert.deepEqual(
        progressProblem(current, progress),
        { path: '/status', message: `the release is ${current} and changes no more` },
        `${current} ${JSON.stringify(progress)}`,
      );
    }
  }
});

test('more workers updated than there are in total is refused at /workersUpdated', () => {
  for (const current of ['pending', 'rolling'] as const) {
    for (const status of ['rolling', 'completed', 'failed'] as const) {
      for (const [workersUpdated, workersTotal] of [
        [1, 0],
        [4, 3],
        [100_000, 99_999],
      ] as const) {
        assert.deepEqual(
          progressProblem(current, { status, workersUpdated, workersTotal }),
          { path: '/workersUpdated', message: 'must be at most workersTotal' },
          `${current} ${status} ${workersUpdated}/${workersTotal}`,
        );
      }
    }
  }
});
