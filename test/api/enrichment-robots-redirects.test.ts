// robots.txt governs every page the website provider reads (docs/enrichment.md §The website
// provider): a home page that redirects is read only when the robots.txt of the address it
// redirects to allows that address, on its own host or another one; a redirect robots.txt
// disallows is not followed, and the run completes having filled nothing.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { settled, startTestRunner } from '../helpers/enrichment.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

const PAGE = `<!doctype html><html><head><title>Acme</title></head><body>
<a href="https://www.linkedin.com/company/acme-anvils/">LinkedIn</a></body></html>`;

/** A site on 127.0.0.1 whose requests (host and path) are recorded; `handle` answers them. */
async function site(handle: (host: string, path: string, res: ServerResponse, port: number) => void) {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const host = String(req.headers.host ?? '').split(':')[0] ?? '';
    seen.push(`${host}${req.url ?? '/'}`);
    handle(host, req.url ?? '/', res, (server.address() as AddressInfo).port);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    website: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const robots = (res: ServerResponse, text: string) => res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
const page = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
const moved = (res: ServerResponse, location: string) => res.writeHead(302, { location }).end();

// The home page allowed, the rest of the site not, but for /welcome.
const ONLY_HOME = 'User-agent: RolodexEnrichment\nAllow: /$\nAllow: /welcome\nDisallow: /\n';

/** Sites whose home page redirects; closed after the tests. */
const sites: Awaited<ReturnType<typeof site>>[] = [];
let samePath: (typeof sites)[number];
let otherHost: (typeof sites)[number];
let allowedPath: (typeof sites)[number];
before(async () => {
  samePath = await site((_host, path, res) => {
    if (path === '/robots.txt') return robots(res, ONLY_HOME);
    if (path === '/') return moved(res, '/members/home');
    page(res);
  });
  // 127.0.0.1 allows everything and redirects to localhost, whose robots.txt disallows the provider.
  otherHost = await site((host, path, res, port) => {
    if (path === '/robots.txt') return robots(res, host === 'localhost' ? 'User-agent: RolodexEnrichment\nDisallow: /\n' : 'User-agent: *\nAllow: /\n');
    if (host !== 'localhost') return moved(res, `http://localhost:${port}/`);
    page(res);
  });
  allowedPath = await site((_host, path, res) => {
    if (path === '/robots.txt') return robots(res, ONLY_HOME);
    if (path === '/') return moved(res, '/welcome');
    page(res);
  });
  sites.push(samePath, otherHost, allowedPath);
});
after(() => {
  for (const s of sites) s.close();
});

eachDialect(
  'enrichment: robots.txt across redirects',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = startTestRunner(ctx(), PROVIDERS, { userAgent: 'RolodexEnrichment/1.0 (+test)' });
    });
    after(() => r.stop());

    /** Enriches an account on `website`; the run as it ended and the account's $linkedIn. */
    async function enrich(website: string) {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: [website] } })).json();
      const started = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
      assert.equal(started.status, 'started');
      const run = await settled(t, s.secret, started.enrichmentRun.id);
      return { status: run.status, linkedIn: (await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$linkedIn.value };
    }

    test('a redirect to a path its robots.txt disallows is not followed: the run completes and fills nothing', async () => {
      assert.deepEqual(await enrich(samePath.website), { status: 'completed', linkedIn: null });
      assert.ok(!samePath.seen.some((s) => s.endsWith('/members/home')), `the disallowed page was read: ${samePath.seen.join(', ')}`);
    });

    test("a redirect to another host is followed only as that host's robots.txt allows", async () => {
      assert.deepEqual(await enrich(otherHost.website), { status: 'completed', linkedIn: null });
      assert.ok(otherHost.seen.includes('localhost/robots.txt'), `the other host's robots.txt was not read: ${otherHost.seen.join(', ')}`);
      assert.ok(!otherHost.seen.includes('localhost/'), `the disallowed page was read: ${otherHost.seen.join(', ')}`);
    });

    test('a redirect to an allowed path is followed and the page read', async () => {
      assert.deepEqual(await enrich(allowedPath.website), { status: 'completed', linkedIn: 'https://linkedin.com/company/acme-anvils' });
    });
  },
  { env: { ENRICH_ALLOW_PRIVATE: 'true', ENRICH_POLL_MS: '20' } },
);
