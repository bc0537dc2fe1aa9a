// The interactive reference at /docs, in headless Chromium: the page loads from this server alone
// (no request leaves the machine) and lists every operation of /openapi.json.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { IN_CI } from '../helpers/services.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';

const HOST_NAME = 'rolodex.example';
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!existsSync(CHROMIUM)) {
  process.stderr.write(`\n!! Chromium not found at ${CHROMIUM}: the /docs end-to-end test is NOT RUN (apt-get install chromium)\n\n`);
  if (IN_CI) throw new Error(`Chromium missing at ${CHROMIUM}`);
} else {
  describe('API reference at /docs in Chromium', () => {
    let t: TestApp;
    let browser: Browser;
    let base: string;
    let local: string;
    before(async () => {
      // The test routes make the page list more than one operation, with several tags and methods.
      t = await buildTestApp('sqlite', { routes: pipelineRoutes });
      local = await t.app.listen({ port: 0, host: '127.0.0.1' });
      // Opened by a name that is not loopback, as an operator on another machine would, over
      // plain HTTP: Chromium treats 127.0.0.1 as secure, which would hide a page that only works there.
      base = local.replace('127.0.0.1', HOST_NAME);
      browser = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, `--host-resolver-rules=MAP ${HOST_NAME} 127.0.0.1`], timeout: 30_000 });
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    test('the page asks no upgrade to https: it is served over plain HTTP', async () => {
      const res = await fetch(`${local}/docs/static/index.html`, { headers: { host: new URL(base).host } });
      assert.equal(res.status, 200);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/);
    });

    test('the page loads from this server and lists every operation', async () => {
      const doc = (await (await fetch(`${local}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
      const expected = Object.values(doc.paths)
        .flatMap((item) => Object.values(item).map((op) => op.operationId))
        .sort();
      assert.ok(expected.length >= 4);

      const page = await browser.newPage();
      const foreign: string[] = [];
      const failed: string[] = [];
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.origin === base || url.protocol === 'data:') return route.continue();
        foreign.push(url.href);
        return route.abort();
      });
      page.on('requestfailed', (r) => failed.push(r.url()));
      page.on('pageerror', (e) => failed.push(`page error: ${e.message}`));
      const res = await page.goto(`${base}/docs`, { waitUntil: 'load' });
      assert.equal(res?.status(), 200);
      // Rendering the whole document takes about 4 s on an idle two-core machine; the suite runs
      // four files at once beside PostgreSQL, which has made it take more than 20 s. The wait is
      // for the page to work, not a speed goal, so it is generous, and a timeout says what the
      // page reported instead of only that it timed out.
      try {
        await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll('.opblock-summary-operation-id').length >= n, expected.length, {
          timeout: 120_000,
        });
      } catch (e) {
        const shown = await page.locator('.opblock-summary-operation-id').count();
        assert.fail(
          `${(e as Error).message}; ${shown} of ${expected.length} operations shown; failed: ${JSON.stringify(failed)}; foreign: ${JSON.stringify(foreign)}`,
        );
      }
      const listed = (await page.locator('.opblock-summary-operation-id').allTextContents()).map((s) => s.trim()).sort();
      assert.deepEqual(listed, expected);
      assert.equal(await page.locator('.info .title').first().isVisible(), true);
      assert.match((await page.locator('.info .title').first().textContent()) ?? '', /Rolodex API/);
      if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: true });
      assert.deepEqual(foreign, [], 'the reference must not reach outside this server');
      assert.deepEqual(failed, []);
      await page.close();
    });
  });
}
