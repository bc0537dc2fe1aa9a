// A contact's enrichment links the oldest account one of whose `$website` hosts (ignoring `www.`)
// equals its e-mail domain (docs/enrichment.md): the host as a URL reads it, so a website written
// with letters that a host maps to ASCII (fullwidth `ａｃｍｅ`, the Kelvin sign `K`, upper case)
// matches on both databases alike, and so does an IDN website and an e-mail address on it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { startTestRunner } from '../helpers/enrichment.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';

async function linkedAccount(t: TestApp, secret: string, email: string): Promise<string[]> {
  const con = (await call(t, secret, 'POST', '/v1/contacts', { fields: { $email: [email] } })).json();
  const run = (await call(t, secret, 'POST', `/v1/enrichmentRun/contacts/${con.id}`)).json();
  assert.deepEqual(run.enrichmentRun.targetFields, ['$account']);
  for (let i = 0; i < 400; i++) {
    const got = (await call(t, secret, 'GET', `/v1/enrichmentRun/${run.enrichmentRun.id}`)).json();
    if (!['queued', 'running'].includes(got.status)) break;
    await sleep(25);
  }
  return (await call(t, secret, 'GET', `/v1/contacts/${con.id}`)).json().relationships.$account.values;
}

eachDialect(
  'enrichment: the account of a contact by website host',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = startTestRunner(ctx(), PROVIDERS);
    });
    after(() => r.stop());

    for (const [site, domain] of [
      ['https://ＡＣＭＥ.test/about', 'acme.test'],
      ['https://www.\u212Aiwi.test', 'kiwi.test'],
      ['HTTPS://WWW.Shout.TEST', 'shout.test'],
      ['https://Äpfel.test', 'äpfel.test'],
    ] as const) {
      test(`a website ${JSON.stringify(site)} is on ${domain}`, async () => {
        const t = ctx();
        const s = await seedWorkspace(t);
        await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Decoy', $website: [`https://not${domain}`] } });
        const acc = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Found', $website: [site] } });
        assert.equal(acc.statusCode, 200, acc.body);
        assert.deepEqual(await linkedAccount(t, s.secret, `ana@${domain}`), [acc.json().id]);
      });
    }
  },
  { env: { ENRICH_ALLOW_PRIVATE: 'true', ENRICH_POLL_MS: '20' } },
);
