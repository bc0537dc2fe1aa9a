// A runner under load (docs/enrichment.md §Under load), on both databases: while the process is
// busy with requests a round waits, and runs once the process is not, or once it has waited
// ENRICH_MAX_DEFER_MS; and the load watch reads the event loop's utilization.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { watchLoad } from '../../src/jobs/load.ts';
import { loadConfig } from '../../src/config.ts';
import { eachDialect, type TestApp } from '../helpers/app.ts';
import { queueRuns, startTestRunner } from '../helpers/enrichment.ts';

const RUNS = 3;

/** A provider that finds nothing, noting when each lookup began. */
function timedProvider() {
  const started: number[] = [];
  const provider: EnrichmentProvider = {
    name: 'timed',
    fills: () => ['$linkedIn'],
    canLookUp: () => true,
    async lookUp() {
      started.push(Date.now());
      return {};
    },
  };
  return { provider, started };
}

/** A runner with `provider`, waiting at most `maxDeferMs` while `busy()`. */
const startRunner = (t: TestApp, provider: EnrichmentProvider, maxDeferMs: number, busy: () => boolean) =>
  startTestRunner(t, [provider], { config: { maxDeferMs }, busy });

async function waitFor(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await sleep(10);
  assert.ok(done(), `timed out waiting for: ${what}`);
}

eachDialect(
  'an enrichment runner while the process is busy',
  (ctx) => {
    test('waits while busy, and executes the runs once the process is not', async () => {
      const t = ctx();
      await queueRuns(t, RUNS);
      const { provider, started } = timedProvider();
      let busy = true;
      const r = startRunner(t, provider, 60_000, () => busy);
      try {
        r.wake();
        await sleep(300);
        assert.equal(started.length, 0, 'no run executed while busy');
        const freed = Date.now();
        busy = false;
        await waitFor(`${RUNS} lookups`, () => started.length === RUNS);
        assert.ok(started[0]! >= freed);
      } finally {
        await r.stop();
      }
    });

    test('waits at most ENRICH_MAX_DEFER_MS', async () => {
      const t = ctx();
      await queueRuns(t, RUNS);
      const { provider, started } = timedProvider();
      const maxDeferMs = 400;
      const began = Date.now();
      const r = startRunner(t, provider, maxDeferMs, () => true);
      try {
        await waitFor(`${RUNS} lookups`, () => started.length === RUNS);
        assert.ok(started[0]! - began >= maxDeferMs, `the first lookup came ${started[0]! - began} ms after the start`);
      } finally {
        await r.stop();
      }
    });

    test('ENRICH_MAX_DEFER_MS=0: never waits', async () => {
      const t = ctx();
      await queueRuns(t, RUNS);
      const { provider, started } = timedProvider();
      const r = startRunner(t, provider, 0, () => true);
      try {
        await waitFor(`${RUNS} lookups`, () => started.length === RUNS);
      } finally {
        await r.stop();
      }
    });
  },
  { env: { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '20', ENRICH_MAX_DEFER_MS: '60000' } },
);

test('the load watch: busy while the event loop runs code, not while it waits', async () => {
  const watch = watchLoad(50);
  try {
    // Code that runs 20 ms at a stretch, the timers getting a turn between stretches.
    for (const end = Date.now() + 400; Date.now() < end;) {
      const stretch = Date.now() + 20;
      while (Date.now() < stretch);
      await new Promise(setImmediate);
    }
    assert.equal(watch.busy(), true);
    await sleep(300);
    assert.equal(watch.busy(), false);
  } finally {
    watch.stop();
  }
});

test('ENRICH_MAX_DEFER_MS: 10 s by default, 0 to 60,000, anything else refused at start-up', (t) => {
  const DATA_DIR = mkdtempSync(join(tmpdir(), 'rolodex-config-'));
  t.after(() => rmSync(DATA_DIR, { recursive: true, force: true }));
  assert.equal(loadConfig({ DATA_DIR }).enrichment.maxDeferMs, 10_000);
  assert.equal(loadConfig({ DATA_DIR, ENRICH_MAX_DEFER_MS: '0' }).enrichment.maxDeferMs, 0);
  for (const bad of ['-1', '60001', 'soon', '1.5']) assert.throws(() => loadConfig({ DATA_DIR, ENRICH_MAX_DEFER_MS: bad }), /ENRICH_MAX_DEFER_MS/, bad);
});
