// What an enrichment run writes when the records engine would refuse part of it (docs/enrichment.md
// §What a run fills), on both databases: a value of a unique field that another record holds is
// left out, as a value the field does not take is, and the rest of the run is still written.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { startTestRunner, settled } from '../helpers/enrichment.ts';

const PAGE = `<!doctype html><html><head><title>Acme</title><link rel="icon" href="/logo.png"></head>
<body><a href="https://www.linkedin.com/company/acme-anvils/">LinkedIn</a></body></html>`;

let site: Server;
let base = '';
before(async () => {
  site = createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
after(() => {
  site.closeAllConnections();
  site.close();
});

eachDialect(
  'enrichment values refused',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = startTestRunner(ctx(), PROVIDERS);
    });
    after(() => r.stop());

    test('a unique value another record holds is left out; the run completes and writes the rest', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'logo', label: 'Logo', valueType: 'URL', unique: true });
      const enrich = async (name: string) => {
        const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name, $website: [base] } })).json();
        const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json().enrichmentRun;
        assert.deepEqual(run.targetFields, ['$linkedIn', '$twitter', '$facebook', '$instagram', 'logo']);
        const done = await settled(t, s.secret, run.id);
        return { done, fields: (await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields };
      };
      const first = await enrich('Acme');
      assert.equal(first.done.status, 'completed');
      assert.equal(first.fields.logo.value, `${base}/logo.png`);
      // The same site: its logo is the first account's now, and unique.
      const second = await enrich('Acme again');
      assert.equal(second.done.status, 'completed', 'a value the record cannot take does not fail the run');
      assert.equal(second.fields.logo.value, null, 'the logo another account holds is left out');
      assert.match(String(second.fields.$linkedIn.value), /linkedin\.com\/company\/acme-anvils/, 'the rest is written');
    });
  },
  { env: { ENRICH_ALLOW_PRIVATE: 'true', ENRICH_POLL_MS: '20' } },
);
