// A domain written with its final dot, the DNS root, is the domain without it (docs/records.md
// §E-mail addresses), and an enrichment run looks up the domain without it (docs/enrichment.md
// §The website provider, §Adding a provider): the website provider fetches the home page of
// `http://localhost.:<port>/` from `localhost`, follows a redirect to a host written with the dot
// to the host without it, and a provider reading a contact's e-mail domain is given `acme.test` for
// `Ann@Acme.Test.`.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { emailDomain, type EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { websiteProvider } from '../../src/enrichment/website.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { startTestRunner, settled } from '../helpers/enrichment.ts';

/** The hosts the site was asked for (the Host header), in order. */
const hosts: string[] = [];
let server: Server;
let port = 0;
before(async () => {
  // Asked as 127.0.0.1, its home page redirects to `localhost.`; asked as anything else, it serves
  // a page whose title names the host it was asked for.
  server = createServer((req, res) => {
    const host = String(req.headers.host);
    hosts.push(host);
    if (req.url === '/robots.txt') res.writeHead(404).end();
    else if (host.startsWith('127.0.0.1')) res.writeHead(302, { location: `http://localhost.:${port}/` }).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Home on ${host}</title>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** The e-mail domains the spy provider was given. */
const domains: (string | null)[] = [];
// It claims a contact's `$account`, which every contact's run targets, to be asked first; it finds
// nothing, so the run links the account itself.
const spy: EnrichmentProvider = {
  name: 'spy',
  fills: (entityType) => (entityType === 'contact' ? ['$account'] : []),
  canLookUp: (subject) => emailDomain(subject) !== null,
  async lookUp(subject) {
    domains.push(emailDomain(subject));
    return {};
  },
};

eachDialect(
  'enrichment of a domain written with its final dot',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = startTestRunner(ctx(), [websiteProvider, spy]);
    });
    after(() => r.stop());

    async function nameFrom(t: TestApp, website: string): Promise<{ status: string; name: unknown }> {
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Before', $website: [website] } })).json();
      const res = await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, { fields: ['$name'] });
      assert.equal(res.statusCode, 200, res.body);
      const run = await settled(t, s.secret, res.json().enrichmentRun.id);
      const name = (await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$name.value;
      return { status: run.status, name };
    }

    test('the home page of a website written with the dot is fetched from the host without it', async () => {
      hosts.length = 0;
      assert.deepEqual(await nameFrom(ctx(), `http://Localhost.:${port}/about`), { status: 'completed', name: `Home on localhost:${port}` });
      assert.deepEqual(hosts, [`localhost:${port}`, `localhost:${port}`], 'robots.txt, then the home page');
    });

    test('a redirect to a host written with the dot is followed to the host without it', async () => {
      hosts.length = 0;
      assert.deepEqual(await nameFrom(ctx(), `http://127.0.0.1:${port}`), { status: 'completed', name: `Home on localhost:${port}` });
      // robots.txt and the home page of each host: the redirect's host is asked too (docs/enrichment.md).
      assert.deepEqual(hosts, [`127.0.0.1:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `localhost:${port}`]);
    });

    test("a provider is given a contact's e-mail domain without its final dot", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      domains.length = 0;
      const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['Ann@Acme.Test.'] } })).json();
      const res = await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${con.id}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await settled(t, s.secret, res.json().enrichmentRun.id)).status, 'completed');
      assert.deepEqual(domains, ['acme.test']);
    });
  },
  { env: { ENRICH_ALLOW_PRIVATE: 'true', ENRICH_POLL_MS: '20' } },
);
