// Merges through the API (docs/merge.md) on both databases: field resolution, the union of
// multi-valued identity fields, every link moved to the primary, list memberships kept once,
// meetings repointed through the merged addresses, archived fields carried as active ones are (and
// recorded in their history), the
// duplicate in the trash for good; the
// refusals (a union of more values than a field holds among them); and a property test: on random graphs no link that touched either record is lost or
// duplicated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { setArchived } from '../../src/records/definitions-view.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, keyFor, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { write } from '../../src/db/write.ts';

eachDialect('merge', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, extra: Record<string, string> = {}) {
    const res = await call(ctx(), s.secret, method, url, body, extra);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, status: number, code: string, param?: string) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, status, `${url} ${JSON.stringify(body)}: ${res.body}`);
    assert.equal(res.json().error.code, code, res.body);
    if (param !== undefined) assert.equal(res.json().error.param, param, res.body);
  }

  test('contacts: fields, $email union, links, memberships, meetings; the duplicate is trashed for good', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const p = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' }, $email: ['ann@acme.test'] } });
    const d = await ok(s, 'POST', '/v1/contacts', {
      fields: { $name: { firstName: 'Annie' }, $email: ['ANN@acme.test', 'ann@home.test'], $profilePhotoUrl: 'https://img.test/a.png' },
      relationships: { $account: acc.id },
    });
    const both = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'Both', $objectType: 'contact' }, relationships: { $contacts: [p.id, d.id] } });
    const dupOnly = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'Dup', $objectType: 'contact' }, relationships: { $contacts: [d.id] } });
    const meeting = await ok(s, 'POST', '/v1/meetings', {
      fields: { $title: 'Call', $startDate: '2025-02-01T10:00:00Z', $endDate: '2025-02-01T11:00:00Z', $attendeeEmails: ['ann@home.test'] },
    });
    assert.deepEqual((await ok(s, 'GET', `/v1/meetings/${meeting.id}`)).relationships.$contact.values, [d.id]);

    const h = { 'idempotency-key': 'merge-1' };
    const out = await ok(s, 'POST', '/v1/contacts/merge', { primaryId: p.id, duplicateId: d.id }, h);
    assert.match(out.merge.id, /^mrg_/);
    assert.equal(out.merge.status, 'done');
    assert.deepEqual(out.primary.fields.$name.value, { firstName: 'Ann' });
    assert.deepEqual(out.primary.fields.$email.value, ['ann@acme.test', 'ann@home.test']);
    assert.equal(out.primary.fields.$profilePhotoUrl.value, 'https://img.test/a.png');
    assert.deepEqual(out.primary.relationships.$account.values, [acc.id]);
    assert.equal(out.summary.fieldWriteCount, 2);
    // The account's link and the one membership moved; the list that held both keeps the primary's.
    assert.equal(out.summary.syncRepointedCount, 2);
    assert.deepEqual(await ok(s, 'POST', '/v1/contacts/merge', { primaryId: p.id, duplicateId: d.id }, h), out);
    assert.deepEqual(await ok(s, 'GET', `/v1/contacts/${p.id}`), out.primary);
    assert.equal((await call(ctx(), s.secret, 'GET', `/v1/contacts/${d.id}`)).statusCode, 404);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$contact.values, [p.id]);
    const bothPage = await ok(s, 'GET', `/v1/lists/${both.id}/contacts`);
    assert.deepEqual([bothPage.data.map((r: { id: string }) => r.id), bothPage.totalCount], [[p.id], 1]);
    assert.deepEqual(
      (await ok(s, 'GET', `/v1/lists/${dupOnly.id}/contacts`)).data.map((r: { id: string }) => r.id),
      [p.id],
    );
    assert.deepEqual((await ok(s, 'GET', `/v1/meetings/${meeting.id}`)).relationships.$contact.values, [p.id]);
    assert.equal((await ok(s, 'GET', '/v1/contacts')).totalCount, 1);

    const merge = await ok(s, 'GET', `/v1/merges/${out.merge.id}`);
    assert.deepEqual(
      { ...merge, createdAt: 'x', updatedAt: 'x' },
      { id: out.merge.id, createdAt: 'x', updatedAt: 'x', entityType: 'contact', primaryId: p.id, duplicateId: d.id, status: 'done' },
    );
    const accountsOnly = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['accounts:read']) };
    assert.equal((await call(ctx(), accountsOnly.secret, 'GET', `/v1/merges/${out.merge.id}`)).statusCode, 403);
    const contactsOnly = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['contacts:read']) };
    assert.equal((await ok(contactsOnly, 'GET', `/v1/merges/${out.merge.id}`)).id, out.merge.id);
    const db = ctx().deps.db.kysely;
    await assert.rejects(
      write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: d.id })),
      /merged into/,
    );
    await refused(s, '/v1/contacts/merge', { primaryId: p.id, duplicateId: d.id }, 400, 'relationship_entity_missing', 'duplicateId');
  });

  test('a merge of a custom type is read with custom_objects:read, and refused alike to a key without it', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
    const [a, b] = [
      await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'A' } }),
      await ok(s, 'POST', '/v1/objects/project/values', { fields: { name: 'B' } }),
    ];
    const out = await ok(s, 'POST', '/v1/objects/project/merge', { primaryId: a.id, duplicateId: b.id });
    const custom = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['custom_objects:read']) };
    assert.equal((await ok(custom, 'GET', `/v1/merges/${out.merge.id}`)).entityType, 'project');
    const others = await keyFor(ctx(), s.workspaceId, s.userId, ['accounts:read', 'contacts:read', 'opportunities:read']);
    const answers = await Promise.all([out.merge.id, `mrg_${'0'.repeat(26)}`].map((id) => call(ctx(), others, 'GET', `/v1/merges/${id}`)));
    assert.deepEqual(
      answers.map((r) => [r.statusCode, r.json().error.code, r.json().error.message.replace(/mrg_\w+/, 'ID')]),
      [0, 1].map(() => [403, 'insufficient_scope', answers[0]!.json().error.message.replace(/mrg_\w+/, 'ID')]),
    );
  });

  test('resolutions, multiSelectUnion, and the refusals', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    await addField(operatorCtx(db, s.workspaceId), { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', $industry: ['Software'], code: 'A1' } });
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B', $industry: ['Retail'], code: 'B1' } });
    await refused(s, '/v1/accounts/merge', {}, 400, 'parameter_missing');
    await refused(s, '/v1/accounts/merge', { primaryId: a.id, duplicateId: a.id }, 400, 'invalid_value', 'duplicateId');
    await refused(s, '/v1/accounts/merge', { primaryId: 'acc_nope', duplicateId: b.id }, 400, 'relationship_entity_missing', 'primaryId');
    await refused(
      s,
      '/v1/accounts/merge',
      { primaryId: a.id, duplicateId: b.id, fieldResolutions: { nope: 'primary' } },
      400,
      'unknown_field',
      'fieldResolutions.nope',
    );
    await refused(
      s,
      '/v1/accounts/merge',
      { primaryId: a.id, duplicateId: b.id, fieldResolutions: { $name: { value: 5 } } },
      400,
      'invalid_type',
      'fieldResolutions.$name',
    );
    await refused(s, '/v1/accounts/merge', { primaryId: a.id, duplicateId: b.id, extra: 1 }, 400, 'unknown_field', 'extra');
    const out = await ok(s, 'POST', '/v1/accounts/merge', {
      primaryId: a.id,
      duplicateId: b.id,
      fieldResolutions: { $name: { value: 'AB' }, code: 'duplicate' },
      options: { multiSelectUnion: true },
    });
    assert.equal(out.primary.fields.$name.value, 'AB');
    assert.equal(out.primary.fields.code.value, 'B1');
    assert.equal(out.primary.fields.$industry.value.length, 2);
    assert.equal(out.summary.fieldWriteCount, 3);

    const x = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'X' } });
    const o1 = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'O1', $stage: 'Lead' }, relationships: { $account: a.id } });
    const o2 = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'O2', $stage: 'Lead' }, relationships: { $account: x.id } });
    await refused(s, '/v1/opportunities/merge', { primaryId: o1.id, duplicateId: o2.id }, 400, 'invalid_value', 'duplicateId');
  });

  test('an empty text or list is a value the primary keeps; only an unset (null) field takes the duplicate one', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'motto', label: 'Motto', valueType: 'TEXT' });
    await addField(op, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'TEXT' });
    const fields = { motto: '', $industry: [], $website: [] };
    const dup = { motto: 'Onward', $industry: ['Retail'], $website: ['https://d.test'], tier: 'gold' };
    const p = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'P', ...fields } });
    const d = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'D', ...dup } });
    const values = (r: { fields: Record<string, { value: unknown }> }) => [r.fields.motto?.value, r.fields.$industry?.value, r.fields.tier?.value];
    assert.deepEqual(values(p), ['', [], null], 'the primary holds an empty text and an empty list, and no tier');
    const industry = d.fields.$industry.value;
    // docs/merge.md §Fields: "set" is "not null", as the API answers an unset field; a multi-valued
    // URL takes the union, so its empty list yields the duplicate's values.
    const out = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: p.id, duplicateId: d.id });
    assert.deepEqual(values(out.primary), ['', [], 'gold']);
    assert.deepEqual(out.primary.fields.$website.value, ['https://d.test']);
    // A resolution takes the duplicate's value instead.
    const q = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Q', ...fields } });
    const e = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'E', ...dup } });
    const chosen = await ok(s, 'POST', '/v1/accounts/merge', {
      primaryId: q.id,
      duplicateId: e.id,
      fieldResolutions: { motto: 'duplicate', $industry: 'duplicate' },
    });
    assert.deepEqual(values(chosen.primary), ['Onward', industry, 'gold']);
    // multiSelectUnion: the union of the primary's empty set with the duplicate's options.
    const u = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'U', ...fields } });
    const f = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'F', ...dup } });
    const joined = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: u.id, duplicateId: f.id, options: { multiSelectUnion: true } });
    assert.deepEqual(values(joined.primary), ['', industry, 'gold']);
  });

  test('an archived field keeps the primary value when set, else takes the duplicate one, back with unarchive', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'zone', label: 'Zone', valueType: 'TEXT', unique: true });
    await addField(op, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'TEXT' });
    const p = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'P', tier: 'gold' } });
    const d = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'D', zone: 'Z9', tier: 'silver' } });
    const archive = (key: string, archived: boolean) =>
      write(ctx().deps.db.kysely, (tx) => setArchived({ ...op, db: tx }, { objectType: 'account', key, archived }));
    await archive('zone', true);
    await archive('tier', true);
    const out = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: p.id, duplicateId: d.id });
    assert.equal(out.summary.fieldWriteCount, 0, 'archived fields are not counted');
    await archive('zone', false);
    await archive('tier', false);
    const merged = await ok(s, 'GET', `/v1/accounts/${p.id}`);
    assert.deepEqual([merged.fields.zone.value, merged.fields.tier.value], ['Z9', 'gold']);
    // The value taken while archived is in the history, which ends with the value the record holds.
    const zone = await ok(s, 'GET', `/v1/accounts/${p.id}/fields/zone/history`);
    assert.deepEqual(
      zone.data.map((e: { value: unknown; isCreate: boolean }) => [e.value, e.isCreate]),
      [
        ['Z9', false],
        [null, true],
      ],
    );
    const tier = await ok(s, 'GET', `/v1/accounts/${p.id}/fields/tier/history`);
    assert.deepEqual(
      tier.data.map((e: { value: unknown }) => e.value),
      ['gold'],
    );
    const event = (await ctx().deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).execute())
      .map((r) => JSON.parse(r.body))
      .find((e: { type: string }) => e.type === 'account.merged');
    assert.deepEqual(Object.keys(event.data.changes), [], 'the event names only the fields the API shows');
    assert.equal((await ok(s, 'GET', '/v1/accounts?zone[equal]=Z9')).totalCount, 1);
    await refused(s, '/v1/accounts', { fields: { $name: 'E', zone: 'Z9' } }, 409, 'duplicate_value', 'fields.zone');
  });

  test('a union of more values than a field holds is refused, and a resolution of the field decides it', async () => {
    const s = await seedWorkspace(ctx());
    const emails = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@acme.test`);
    const p = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'P' }, $email: emails('p', 1000) } });
    const d = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'D' }, $email: emails('d', 2) } });
    // 1,002 addresses would be a value no update or import takes back.
    await refused(s, '/v1/contacts/merge', { primaryId: p.id, duplicateId: d.id }, 400, 'invalid_value', 'fieldResolutions.$email');
    assert.equal((await ok(s, 'GET', `/v1/contacts/${d.id}`)).id, d.id, 'nothing was merged');
    const out = await ok(s, 'POST', '/v1/contacts/merge', { primaryId: p.id, duplicateId: d.id, fieldResolutions: { $email: 'primary' } });
    assert.deepEqual(out.primary.fields.$email.value, emails('p', 1000));
  });

  test('a malformed resolution is refused naming the member at fault, its message naming the param', async () => {
    const s = await seedWorkspace(ctx());
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A' } });
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B' } });
    const answer = async (resolution: unknown, status: number, code: string, param: string) => {
      const body = { primaryId: a.id, duplicateId: b.id, fieldResolutions: { $name: resolution } };
      const res = await call(ctx(), s.secret, 'POST', '/v1/accounts/merge', body);
      assert.deepEqual([res.statusCode, res.json().error.code, res.json().error.param], [status, code, param], res.body);
      assert.ok(res.json().error.message.includes(`"${param}"`), `the message names "${param}": ${res.body}`);
      return res.json().error.message as string;
    };
    await answer({ value: 'x', y: 1 }, 400, 'unknown_field', 'fieldResolutions.$name.y');
    await answer({}, 400, 'parameter_missing', 'fieldResolutions.$name.value');
    const forms = '"primary", "duplicate" or {"value": ...}';
    assert.ok((await answer('both', 400, 'invalid_value', 'fieldResolutions.$name')).includes(forms));
    assert.ok((await answer(5, 400, 'invalid_type', 'fieldResolutions.$name')).includes(forms));
    assert.ok((await answer(null, 400, 'invalid_type', 'fieldResolutions.$name')).includes(forms));
    await answer({ value: 5 }, 400, 'invalid_type', 'fieldResolutions.$name');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${b.id}`)).id, b.id, 'a refused merge changes nothing');
  });

  test('property: on random graphs, no link that touched either record is lost or duplicated', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    const op = operatorCtx(db, s.workspaceId);
    await addRelationship(op, { objectType: 'contact', key: 'peers', label: 'Peers', cardinality: 'has_many', targetType: 'contact' });
    await addRelationship(op, { objectType: 'contact', key: 'best', label: 'Best account', cardinality: 'has_one', targetType: 'account' });
    const accounts = await Promise.all(['A', 'B'].map(async (n) => (await ok(s, 'POST', '/v1/accounts', { fields: { $name: n } })).id as string));
    const lists = await Promise.all(
      ['L1', 'L2'].map(async (n) => (await ok(s, 'POST', '/v1/lists', { fields: { $name: n, $objectType: 'contact' } })).id as string),
    );

    const graph = fc.record({
      account: fc.array(fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }), { minLength: 4, maxLength: 4 }),
      best: fc.array(fc.option(fc.integer({ min: 0, max: 1 }), { nil: null }), { minLength: 4, maxLength: 4 }),
      peers: fc.array(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 4 }), { minLength: 4, maxLength: 4 }),
      members: fc.array(fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }), { minLength: 4, maxLength: 4 }),
    });
    type Link = string;
    async function links(ids: readonly string[]): Promise<Link[]> {
      const rels = await db
        .selectFrom('entity_relationships')
        .select(['source_id', 'name', 'target_id'])
        .where((eb) => eb.or([eb('source_id', 'in', ids), eb('target_id', 'in', ids)]))
        .execute();
      const mem = await db.selectFrom('list_members').select(['list_id', 'entity_id']).where('entity_id', 'in', ids).execute();
      return [...rels.map((r) => `${r.source_id} ${r.name} ${r.target_id}`), ...mem.map((m) => `${m.list_id} member ${m.entity_id}`)].sort();
    }
    await fc.assert(
      fc.asyncProperty(graph, async (g) => {
        const contacts: string[] = [];
        for (let i = 0; i < 4; i++) {
          const best = g.best[i];
          const relationships = {
            $account: [...new Set((g.account[i] ?? []).map((j) => accounts[j] as string))],
            ...(best === null || best === undefined ? {} : { best: accounts[best] }),
          };
          const body = { fields: { $name: { firstName: `C${i}` } }, relationships };
          contacts.push((await ok(s, 'POST', '/v1/contacts', body)).id);
        }
        for (let i = 0; i < 4; i++) {
          const peers = [...new Set((g.peers[i] ?? []).map((j) => contacts[j] as string))];
          if (peers.length > 0) await ok(s, 'POST', `/v1/contacts/${contacts[i]}`, { relationships: { peers: { add: peers } } });
          for (const l of new Set(g.members[i] ?? [])) await ok(s, 'POST', `/v1/lists/${lists[l]}`, { relationships: { $contacts: { add: [contacts[i]] } } });
        }
        const [p, d] = [contacts[0] as string, contacts[1] as string];
        const before = await links([p, d]);
        // A has_one keeps the primary's link when both are set (the duplicate's is dropped, with a warning).
        const conflict = g.best[0] !== null && g.best[1] !== null && g.best[0] !== g.best[1];
        const expected = [
          ...new Set(before.filter((l) => !(conflict && l === `${d} best ${accounts[g.best[1] as number]}`)).map((l) => l.replaceAll(d, p))),
        ].sort();
        await ok(s, 'POST', '/v1/contacts/merge', { primaryId: p, duplicateId: d });
        const after = await links([p, d]);
        assert.deepEqual(after, expected);
        assert.equal(new Set(after).size, after.length, 'no link twice');
      }),
      { numRuns: 20 },
    );
  });
});
