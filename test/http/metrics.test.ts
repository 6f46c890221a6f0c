import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { forEachDialect, startHarness, templateBody } from '../support/harness.ts';

// /metrics, read by a real Prometheus text parser: request durations by route template and status (a bounded set
// of series, whatever URLs arrive), requests in flight, the process's figures, the database's, the outbox.

forEachDialect('/metrics', (dialect) => {
  test('parses as Prometheus text; 1,000 distinct ids make no more series; every figure is there', async () => {
    const h = await startHarness(dialect);
    try {
      const key = await h.key('metrics');
      const created = await h.call('POST', '/v1/templates', { key, body: templateBody() });
      assert.equal(created.status, 200);
      for (let i = 0; i < 1000; i++) {
        const id = `missing${String(i).padStart(9, '0')}`;
        assert.equal((await h.call('GET', `/v1/templates/${id}`, { key })).status, 404);
        assert.equal((await h.call('GET', `/no/such/path/${id}`, { key })).status, 404);
      }
      assert.equal((await h.call('GET', `/v1/templates/${created.body.id}`, { key })).status, 200);
      assert.equal((await h.call('GET', '/v1/templates?limit=5', { key })).status, 200);

      const r = await h.call('GET', '/metrics');
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const families = new Map(parsePrometheusTextFormat(r.text).map((f) => [f.name, f]));

      assert.equal(families.get('podplate_http_request_duration_seconds')?.type, 'HISTOGRAM');
      // The parser keeps one series of a labelled histogram only, so each series' _count line is read as a gauge's.
      const counts = r.text
        .split('\n')
        .filter((line) => line.startsWith('podplate_http_request_duration_seconds_count{'))
        .map((line) => line.replace('_count{', '_requests{'));
      const [requests] = parsePrometheusTextFormat(`# TYPE podplate_http_request_duration_seconds_requests gauge\n${counts.join('\n')}\n`);
      const series = new Map(
        (requests?.metrics ?? []).map((m) => [`${m.labels?.method} ${m.labels?.route} ${m.labels?.status_code}`, Number(m.value)]),
      );
      assert.deepEqual(
        new Map([...series].sort()),
        new Map([
          ['GET (unmatched) 404', 1000],
          ['GET /v1/templates 200', 1],
          ['GET /v1/templates/:templateId 200', 1],
          ['GET /v1/templates/:templateId 404', 1000],
          ['POST /v1/templates 200', 1],
        ]),
      );
      assert.match(
        r.text,
        /\npodplate_http_request_duration_seconds_bucket\{method="GET",route="\/v1\/templates\/:templateId",status_code="404",le="\+Inf"\} 1000\n/,
        'the +Inf bucket holds every request of its series',
      );
      assert.doesNotMatch(r.text, /missing0/, 'no raw URL in any label');

      assert.equal(families.get('podplate_http_requests_in_flight')?.metrics[0]?.value, '1', 'the scrape itself');
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
      ]) {
        assert.ok(families.has(name), name);
      }
      assert.equal(families.get('podplate_outbox_pending')?.metrics[0]?.value, '0');
      assert.equal(families.get('podplate_outbox_failing')?.metrics[0]?.value, '0');
      assert.equal(families.get('podplate_outbox_oldest_pending_seconds')?.metrics[0]?.value, '0');

      if (dialect === 'sqlite') {
        const groups = families.get('podplate_db_group_commit_size');
        assert.equal(groups?.type, 'HISTOGRAM');
        assert.ok(Number(groups.metrics[0]?.count) >= 2, 'the key and the template were committed');
        assert.ok(!families.has('podplate_db_pool_max'));
      } else {
        assert.equal(families.get('podplate_db_pool_max')?.metrics[0]?.value, '5');
        assert.ok(Number(families.get('podplate_db_pool_acquisitions_total')?.metrics[0]?.value) >= 1000, 'every read took a connection');
        for (const name of [
          'podplate_db_pool_connections',
          'podplate_db_pool_idle_connections',
          'podplate_db_pool_waiting',
          'podplate_db_pool_waits_total',
          'podplate_db_pool_wait_seconds_total',
        ]) {
          assert.ok(families.has(name), name);
        }
        assert.ok(!families.has('podplate_db_group_commit_size'));
      }
    } finally {
      await h.close();
    }
  });

  test('the outbox gauges count the webhooks waiting', async () => {
    const h = await startHarness(dialect);
    try {
      const key = await h.key('outbox');
      const t = await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true }) });
      const e = await h.call('POST', '/v1/endpoints', { key, body: { name: 'e', templateId: t.body.id, workersMin: 0, workersMax: 1 } });
      assert.equal(e.status, 200, e.text);
      await h.call('POST', `/v1/templates/${t.body.id}/update`, { key, body: { imageName: 'ubuntu:2' } });
      const families = new Map(parsePrometheusTextFormat((await h.call('GET', '/metrics')).text).map((f) => [f.name, f]));
      assert.equal(families.get('podplate_outbox_pending')?.metrics[0]?.value, '1');
      assert.ok(Number(families.get('podplate_outbox_oldest_pending_seconds')?.metrics[0]?.value) >= 0);
    } finally {
      await h.close();
    }
  });

  test("with METRICS_TOKEN, /metrics answers only to that token; the API's keys are no substitute", async () => {
    const token = 'metrics-token-0123456789';
    const h = await startHarness(dialect, { METRICS_TOKEN: token });
    try {
      const key = await h.key('scraper');
      for (const authorization of [undefined, `Bearer ${key}`, `Bearer ${token}x`, token]) {
        const r = await h.call('GET', '/metrics', { headers: authorization ? { authorization } : {} });
        assert.equal(r.status, 401, authorization);
        assert.match(String(r.headers['www-authenticate']), /^Bearer /);
        assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
      }
      const r = await h.call('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200);
      assert.match(r.text, /podplate_outbox_pending/);
    } finally {
      await h.close();
    }
  });

  test("a scrape's cost does not follow the tenants' data: the backlog is read from the database at most every 5 s", async () => {
    const h = await startHarness(dialect);
    try {
      let reads = 0;
      const backlog = h.podplate.releases.backlog.bind(h.podplate.releases);
      h.podplate.releases.backlog = () => {
        reads++;
        return backlog();
      };
      for (let i = 0; i < 20; i++) assert.equal((await h.call('GET', '/metrics')).status, 200);
      assert.equal(reads, 1);
    } finally {
      await h.close();
    }
  });
});
