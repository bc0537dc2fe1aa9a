// Prometheus metrics at /metrics, on both databases: requests by operation and status, latency
// histograms, database pool use, the upload counters, and one registry per app.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics, recordUpload } from '../../src/metrics/registry.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';

async function scrape(t: TestApp): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return res.body;
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

eachDialect('metrics', (ctx) => {
  test('requests are counted by operation and status, with a latency histogram', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const before = await scrape(t);
    const ok = 'rolodex_http_requests_total{operation="validateCredential",method="GET",status="200"}';
    const unauth = 'rolodex_http_requests_total{operation="validateCredential",method="GET",status="401"}';
    const base = value(before, ok) ?? 0;
    for (let i = 0; i < 3; i++) await call(t, s.secret, 'GET', '/v1/auth/validate');
    await call(t, 'rk_wrong', 'GET', '/v1/auth/validate');
    await t.app.inject({ method: 'GET', url: '/v1/no-such-route' });
    const after = await scrape(t);
    assert.equal(value(after, ok), base + 3);
    assert.equal(value(after, unauth), 1);
    assert.equal(value(after, 'rolodex_http_requests_total{operation="not_found",method="GET",status="404"}'), 1, 'unknown URLs share one label');
    assert.ok((value(after, 'rolodex_http_request_duration_seconds_count{operation="validateCredential"}') ?? 0) >= base + 4);
    assert.ok((value(after, 'rolodex_http_request_duration_seconds_bucket{le="+Inf",operation="validateCredential"}') ?? 0) >= 4);
    assert.ok(!after.includes('rk_wrong') && !after.includes('no-such-route'), 'no raw URL or secret becomes a label');
    assert.match(after, /^process_cpu_user_seconds_total /m, 'process metrics');
  });

  test('database pool use is reported on PostgreSQL', async () => {
    const t = ctx();
    const text = await scrape(t);
    if (t.dialect === 'postgres') {
      assert.equal(value(text, 'rolodex_db_pool_connections'), 10, 'the pool size');
      assert.equal(value(text, 'rolodex_db_pool_transactions'), 0, 'no transaction is running');
      assert.equal(value(text, 'rolodex_db_pool_waiting'), 0);
      assert.equal(value(text, 'rolodex_db_pool_scans'), 0, 'no scan is running');
      assert.equal(value(text, 'rolodex_db_pool_scans_waiting'), 0);
    } else {
      assert.equal(value(text, 'rolodex_db_pool_connections'), undefined);
    }
  });

  test('uploads are counted through recordUpload', async () => {
    const t = ctx();
    recordUpload(t.deps.metrics, 1000, 0.2);
    recordUpload(t.deps.metrics, 24, 0.03, 's3');
    const text = await scrape(t);
    assert.equal(value(text, 'rolodex_upload_bytes_total{storage="local"}'), 1000);
    assert.equal(value(text, 'rolodex_upload_bytes_total{storage="s3"}'), 24);
    assert.equal(value(text, 'rolodex_upload_duration_seconds_count{storage="local"}'), 1);
    assert.equal(value(text, 'rolodex_upload_duration_seconds_bucket{le="0.05",storage="s3"}'), 1);
  });
});

test('each app has its own registry', async () => {
  const a = createMetrics({ defaults: false });
  const b = createMetrics({ defaults: false });
  a.requests.inc({ operation: 'x', method: 'GET', status: 200 });
  assert.match(await a.registry.metrics(), /operation="x"/);
  assert.doesNotMatch(await b.registry.metrics(), /operation="x"/);
  createMetrics();
  createMetrics();
});
