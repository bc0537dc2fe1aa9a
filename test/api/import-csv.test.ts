// `rolodex import --format csv --type T` (docs/import.md §CSV): headers by key or label, typed
// cells, select labels, relationships by externalId; every bad row reported (up to 100, then a
// count) with its line, column and a select's valid labels; NDJSON reports every bad line too.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { csvSource } from '../../src/records/csv.ts';
import { operatorCtx } from '../../src/lib/context.ts';

function file(t: TestApp, name: string, text: string): string {
  const path = join(t.tdb.dataDir, name);
  writeFileSync(path, text);
  return path;
}

/** Imports each case's CSV of its type and expects it refused at the header with that error, nothing written. */
async function refusedHeaders(t: TestApp, ws: string, cases: Array<[string, string, string]>): Promise<void> {
  for (const [type, text, error] of cases) {
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', type, file(t, 'header.csv', text)]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `rolodex import: import failed, nothing was written:\n${error}`);
  }
}

const TIER = JSON.stringify({
  object: 'definition',
  externalId: 'd-tier',
  definition: 'field',
  objectType: 'account',
  key: 'tier',
  label: 'Tier',
  valueType: 'SINGLE_SELECT',
  options: ['Gold', 'Silver'],
});

eachDialect('rolodex import of CSV', (ctx) => {
  test('accounts and contacts from CSV: headers by key or label, lists, selects by label, links by externalId', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const defs = await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', TIER)]);
    assert.equal(defs.code, 0, defs.err);
    assert.match(defs.out, /^imported 1 definition in \d+\.\d s$/);
    const accounts = file(
      t,
      'accounts.csv',
      '\ufeffexternalId,Name,tier,Website,$primaryAddress.city,Primary address.country\r\n' +
        'a1,Acme,Gold,https://acme.test;https://acme.example,Berlin,DE\r\n' +
        'a2,"Globex, Inc.",silver,,,\r\n',
    );
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', accounts, '--json']);
    assert.equal(r1.code, 0, r1.err);
    assert.deepEqual(JSON.parse(r1.out).counts, { account: 2 });
    // The same file again changes nothing; without --json the summary counts each kind in words.
    const again = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', accounts]);
    assert.match(again.out, /^imported 2 accounts in \d+\.\d s$/);
    const contacts = file(
      t,
      'people.txt',
      'External ID,$name.firstName,$name.lastName,Email,Accounts\nc1,Ann,Lee,ann@acme.test;ann@globex.test,a1;a2\nc2,Bo,,,\n',
    );
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'contact', contacts, '--json']);
    assert.equal(r2.code, 0, r2.err);
    const ids = JSON.parse(r2.out).ids;

    const ann = (await call(t, s.secret, 'GET', `/v1/contacts/${ids.contact.c1}`)).json();
    assert.deepEqual(ann.fields.$name.value, { firstName: 'Ann', lastName: 'Lee' });
    assert.deepEqual(ann.fields.$email.value, ['ann@acme.test', 'ann@globex.test']);
    const accs = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data as { id: string; fields: Record<string, { value: unknown }> }[];
    const byName = new Map(accs.map((a) => [a.fields.$name?.value, a]));
    assert.deepEqual(ann.relationships.$account.values.toSorted(), [byName.get('Acme')?.id, byName.get('Globex, Inc.')?.id].toSorted());
    const acme = byName.get('Acme') as { fields: Record<string, { value: unknown }> };
    assert.deepEqual(acme.fields.$website?.value, ['https://acme.test', 'https://acme.example']);
    assert.deepEqual(acme.fields.$primaryAddress?.value, { city: 'Berlin', country: 'DE' });
    // Select values come back as option ids: Gold and silver (matched without case) are two options.
    const globex = byName.get('Globex, Inc.') as { fields: Record<string, { value: unknown }> };
    assert.equal(typeof acme.fields.tier?.value, 'string');
    assert.equal(typeof globex.fields.tier?.value, 'string');
    assert.notEqual(acme.fields.tier?.value, globex.fields.tier?.value);
  });

  test('every bad row is reported, up to 100 and then a count, with line, column and the valid labels; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    assert.equal((await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', TIER)])).code, 0);
    const rows = ['externalId,Name,Tier,Website'];
    for (let i = 0; i < 150; i++) rows.push(`a${i},Acme ${i},${i % 50 === 7 ? 'Gold' : 'Platinum'},`);
    rows.push('b1,,Gold,not a url');
    const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'bad.csv', rows.join('\n'))]);
    assert.equal(r.code, 1);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.equal(lines.length, 100, r.err.slice(0, 500));
    assert.match(r.err, /^line 2: Tier: "Platinum" is not an option of Tier; valid labels: Gold, Silver$/m);
    assert.doesNotMatch(r.err, /^line 9:/m, 'a good row is not reported');
    assert.match(r.err, /… and 48 more bad objects/);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);

    const header = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'header.csv', 'externalId,Nmae\na1,Acme\n')]);
    assert.equal(header.code, 1);
    assert.match(header.err, /line 1: Nmae: names no field or relationship of account; fields: \$name \(Name\)/);
    const usage = await rolodex(t, ['import', '--workspace', ws, file(t, 'x.csv', 'externalId\n')]);
    assert.equal(usage.code, 2, usage.err);
    assert.match(usage.err, /--type/);
    const last = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'one.csv', 'externalId,Name,Website\nb1,B,not a url\n')]);
    assert.match(last.err, /line 2: Website: /);
  });

  for (const commit of ['atomic', 'batched'] as const) {
    test(`${commit}: every row naming an externalId found nowhere is reported with its CSV column before anything is written`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ws = s.workspaceId;
      const accounts = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', file(t, 'a.csv', 'externalId,Name\na-1,Acme\n')]);
      assert.equal(accounts.code, 0, accounts.err);
      const contacts = async () => (await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount as number;
      const bad = file(t, 'r.csv', 'externalId,name,accounts\nr-1,A,nope1\nr-2,B,nope2\nr-3,C,a-1;nope3\nr-4,D,a-1\n');
      const r = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', '--commit', commit, bad]);
      assert.equal(r.code, 1, r.err);
      assert.equal(
        r.err,
        [
          'rolodex import: import failed, nothing was written:',
          'line 2: accounts: no account with externalId "nope1" in this import or the workspace',
          'line 3: accounts: no account with externalId "nope2" in this import or the workspace',
          'line 4: accounts: no account with externalId "nope3" in this import or the workspace',
        ].join('\n'),
      );
      assert.equal(await contacts(), 0, 'nothing is written, not even the rows before the first bad one');
      // Up to 100 bad rows are reported, then a count; still nothing written.
      const rows = ['externalId,Name,Accounts'];
      for (let i = 0; i < 150; i++) rows.push(`m-${i},M${i},${i % 50 === 7 ? 'a-1' : `none-${i}`}`);
      const many = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', '--commit', commit, file(t, 'm.csv', rows.join('\n'))]);
      assert.equal(many.code, 1, many.err);
      const lines = many.err.split('\n').filter((l) => /^line \d+:/.test(l));
      assert.equal(lines.length, 100, many.err.slice(0, 500));
      assert.equal(lines[0], 'line 2: Accounts: no account with externalId "none-0" in this import or the workspace');
      assert.ok(!lines.some((l) => l.startsWith('line 9:')), 'a good row is not reported');
      assert.match(many.err, /\n… and 47 more bad objects$/);
      assert.equal(await contacts(), 0);
      // The same rows once every account exists: the workspace's account is found.
      const good = await rolodex(t, [
        'import',
        '--workspace',
        ws,
        '--type',
        'contact',
        '--commit',
        commit,
        file(t, 'g.csv', 'externalId,name,accounts\nr-3,C,a-1\n'),
      ]);
      assert.equal(good.code, 0, good.err);
      assert.equal(await contacts(), 1);
    });
  }

  test('a column may name a member of a name or an address alone, as other CRMs export them, where one field has it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const people = file(t, 'people.csv', 'externalId,First Name,last_name,Email\nc1,Ann,Lee,ann@acme.test\n');
    const r1 = await rolodex(t, ['import', '--workspace', ws, '--type', 'contact', people, '--json']);
    assert.equal(r1.code, 0, r1.err);
    const ann = (await call(t, s.secret, 'GET', `/v1/contacts/${JSON.parse(r1.out).ids.contact.c1}`)).json();
    assert.deepEqual(ann.fields.$name.value, { firstName: 'Ann', lastName: 'Lee' });
    const places = file(t, 'accounts.csv', 'externalId,Name,City,Postal Code,Primary address.Country\na1,Acme,Berlin,10115,de\n');
    const r2 = await rolodex(t, ['import', '--workspace', ws, '--type', 'account', places]);
    assert.equal(r2.code, 0, r2.err);
    const [acme] = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data as { fields: Record<string, { value: unknown }> }[];
    assert.deepEqual(acme?.fields.$primaryAddress?.value, { city: 'Berlin', postalCode: '10115', country: 'DE' });

    // A member of two fields, and a member its field lacks.
    const billing = JSON.stringify({
      object: 'definition',
      externalId: 'd-billing',
      definition: 'field',
      objectType: 'account',
      key: 'billing',
      label: 'Billing',
      valueType: 'ADDRESS',
    });
    const defs = await rolodex(t, ['import', '--workspace', ws, file(t, 'defs.ndjson', billing)]);
    assert.equal(defs.code, 0, defs.err);
    const cases: Array<[string, string, string]> = [
      ['account', 'externalId,City\na2,Paris\n', 'line 1: City: names a member of several fields: name one, as Primary address.city or Billing.city'],
      [
        'contact',
        'externalId,Name.fristName\nc2,Bo\n',
        'line 1: Name.fristName: $name (FULL_NAME) has no member "fristName"; its members: firstName, lastName',
      ],
    ];
    await refusedHeaders(t, ws, cases);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 1);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 1);
  });

  test('a label that several fields or relationships share names none of them: the header is refused, naming their keys', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const field = (key: string, label: string) =>
      JSON.stringify({ object: 'definition', externalId: `d-${key}`, definition: 'field', objectType: 'account', key, label, valueType: 'TEXT' });
    const defs = await rolodex(t, ['import', '--workspace', ws, file(t, 'labels.ndjson', [field('site', 'Website'), field('boss', 'owner')].join('\n'))]);
    assert.equal(defs.code, 0, defs.err);
    await refusedHeaders(t, ws, [
      [
        'account',
        'externalId,Name,Website\na1,Acme,https://acme.test\n',
        'line 1: Website: names several fields or relationships: name one by its key, $website (Website) or site (Website)',
      ],
      [
        'account',
        'externalId,Name,Owner\na1,Acme,u1\n',
        'line 1: Owner: names several fields or relationships: name one by its key, boss (owner) or $owner (Owner)',
      ],
    ]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
    const byKey = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--type',
      'account',
      file(t, 'keys.csv', 'externalId,Name,site,$website\na1,Acme,our site,https://acme.test\n'),
    ]);
    assert.equal(byKey.code, 0, byKey.err);
    const [acme] = (await call(t, s.secret, 'GET', '/v1/accounts')).json().data as { fields: Record<string, { value: unknown }> }[];
    assert.deepEqual([acme?.fields.site?.value, acme?.fields.$website?.value], ['our site', ['https://acme.test']]);
  });

  test('a header naming one field, relationship or externalId in two columns is refused, naming both; nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const cases: Array<[string, string, string]> = [
      ['account', 'externalId,Name,name\nd-1,A,B\n', 'line 1: name: names the field $name, as column "Name" does; a field takes one column'],
      [
        'account',
        'externalId,externalId,Name\nd-1,d-2,A\n',
        'line 1: externalId: names the externalId, as column "externalId" does; the externalId takes one column',
      ],
      [
        'contact',
        'External ID,Accounts,$account\nd-1,a,b\n',
        'line 1: $account: names the relationship $account, as column "Accounts" does; a relationship takes one column, its externalIds separated by ;',
      ],
      [
        'contact',
        'externalId,$name.firstName,Name.firstName\nd-1,A,B\n',
        'line 1: Name.firstName: names the field $name.firstName, as column "$name.firstName" does; a field takes one column',
      ],
      [
        'contact',
        'externalId,Name,$name.lastName\nd-1,A B,C\n',
        'line 1: $name.lastName: names the field $name, as column "Name" does; a field takes one column',
      ],
      [
        'contact',
        'externalId,$name.lastName,Name\nd-1,C,A B\n',
        'line 1: Name: names the field $name, as column "$name.lastName" does; a field takes one column',
      ],
    ];
    await refusedHeaders(t, ws, cases);
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
    assert.equal((await call(t, s.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
    // Two members of one field are two columns of it, as before.
    const members = await rolodex(t, [
      'import',
      '--workspace',
      ws,
      '--type',
      'contact',
      file(t, 'ok.csv', 'externalId,$name.firstName,Name.lastName\nd-1,A,B\n'),
    ]);
    assert.equal(members.code, 0, members.err);
  });

  test('NDJSON: every bad line is reported, JSON errors and shape errors alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const good = (i: number) => JSON.stringify({ object: 'account', externalId: `a${i}`, fields: { $name: { value: `A${i}`, valueType: 'TEXT' } } });
    const text = [
      good(1),
      '{not json',
      good(2),
      JSON.stringify({ object: 'acount', externalId: 'x' }),
      '{"object":',
      good(3),
      JSON.stringify({ object: 'account' }),
    ].join('\n');
    const r = await rolodex(t, ['import', '--workspace', s.workspaceId, file(t, 'bad.ndjson', text)]);
    assert.equal(r.code, 1);
    const lines = r.err.split('\n').filter((l) => /^line \d+:/.test(l));
    assert.deepEqual(
      lines.map((l) => /^line (\d+): ([^:]+):/.exec(l)?.slice(1, 3).join(' ')),
      ['2 (line)', '4 object', '5 (line)', '7 externalId'],
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/accounts')).json().totalCount, 0);
  });

  test('a file that cannot be read is one plain error, never an unhandled one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const format of ['csv', 'ndjson']) {
      const r = await rolodex(t, [
        'import',
        '--workspace',
        s.workspaceId,
        '--format',
        format,
        ...(format === 'csv' ? ['--type', 'account'] : []),
        t.tdb.dataDir,
      ]);
      assert.equal(r.code, 1, r.err);
      assert.match(r.err, /^rolodex import: cannot read .*: a directory, not a file$/);
    }
    // A read that fails once the rows are being read ends them with the error.
    const source = await csvSource(operatorCtx(t.deps.db.kysely, s.workspaceId), t.tdb.dataDir, 'account');
    await assert.rejects(async () => {
      for await (const row of source.objects()) assert.fail(`a row of a directory: ${JSON.stringify(row)}`);
    }, /cannot read .*EISDIR/);
  });
});
