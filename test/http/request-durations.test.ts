import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestDurations } from '../../src/http/plugins/metrics.ts';

// Request durations are counted per label set and made into Prometheus's cumulative buckets when scraped.

test('each label set has its own series: buckets at most each bound (cumulative), the count and the sum', () => {
  const durations = new RequestDurations([0.001, 0.01, 0.1]);
  for (const seconds of [0.0005, 0.001, 0.003, 0.05, 20]) durations.observe('GET', '/v1/templates/:templateId', 200, seconds);
  durations.observe('POST', '/v1/templates', 201, 0.002);
  const [get, post] = durations.read();
  assert.deepEqual(get?.labels, { method: 'GET', route: '/v1/templates/:templateId', status_code: '200' });
  assert.deepEqual(get?.atMost, [2, 3, 4], 'a value equal to a bound is in its bucket; 20 s is in +Inf only');
  assert.equal(get?.count, 5);
  assert.ok(Math.abs((get?.sum ?? 0) - 20.0545) < 1e-9);
  assert.deepEqual(post?.atMost, [0, 1, 1]);
  assert.equal(post?.count, 1);
});
