// The error answers the contract names per operation, where no other test pins them for every
// type (docs/trash.md, docs/merge.md, docs/history.md, docs/enrichment.md), on both databases: a
// record in the trash is 404 resource_not_found to retrieve, update and field history for each of
// the eight deletable types, and 400 relationship_entity_missing to a merge naming it; the merge
// refusals of either id, of a read-only resolution and of an unknown option; a write naming a
// trashed record in any relationship; and an enrichment POST honours Idempotency-Key like every
// other state-changing POST, while the workflow-run status, not built, is no route.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, keyFor, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('contract error answers', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, extra: Record<string, string> = {}) {
    const res = await call(ctx(), s.secret, method, url, body, extra);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body: unknown, status: number, code: string, param?: string) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.deepEqual([res.statusCode, res.json().error?.code], [status, code], `${method} ${url}: ${res.body}`);
    if (param !== undefined) assert.equal(res.json().error.param, param, `${method} ${url}: ${res.body}`);
  }
  async function withProject(s: Seeded) {
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'title', label: 'Title', valueType: 'TEXT' });
  }

  test('a record in the trash, of each of the eight types: retrieve, update and history are 404; a repeated delete answers the same body', async () => {
    const s = await seedWorkspace(ctx());
    await withProject(s);
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const kinds: Array<{ base: string; create: unknown; update: unknown; history?: string; retrieve?: string }> = [
      { base: '/v1/accounts', create: { fields: { $name: 'Gone' } }, update: { fields: { $name: 'x' } }, history: '$name' },
      { base: '/v1/contacts', create: { fields: { $name: { firstName: 'Ann' } } }, update: { fields: { $email: ['a@x.test'] } }, history: '$name' },
      {
        base: '/v1/opportunities',
        create: { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } },
        update: { fields: { $name: 'x' } },
        history: '$stage',
      },
      {
        base: '/v1/tasks',
        create: { fields: { $title: 'T', $status: 'TODO' }, relationships: { $assignedTo: s.userId } },
        update: { fields: { $title: 'x' } },
      },
      { base: '/v1/notes', create: { fields: { $title: 'N' } }, update: { fields: { $title: 'x' } } },
      {
        base: '/v1/meetings',
        create: { fields: { $title: 'M', $startDate: '2025-01-01T10:00:00Z', $endDate: '2025-01-01T11:00:00Z' } },
        update: { fields: { $privacySetting: 'METADATA' } },
      },
      { base: '/v1/lists', create: { fields: { $name: 'L', $objectType: 'account' } }, update: { fields: { $name: 'x' } } },
      { base: '/v1/objects/project/values', create: { fields: { title: 'P' } }, update: { fields: { title: 'x' } }, history: 'title' },
    ];
    for (const k of kinds) {
      const made = await ok(s, 'POST', k.base, k.create);
      const url = `${k.base}/${made.id}`;
      const before = await ok(s, 'GET', url);
      assert.deepEqual(await ok(s, 'DELETE', url), before, `${url}: the delete answers the record as retrieved`);
      assert.deepEqual(await ok(s, 'DELETE', url), before, `${url}: a repeated delete answers the same body`);
      await refused(s, 'GET', url, undefined, 404, 'resource_not_found');
      await refused(s, 'POST', url, k.update, 404, 'resource_not_found');
      if (k.history) await refused(s, 'GET', `${url}/fields/${k.history}/history`, undefined, 404, 'resource_not_found');
    }
  });

  test('a write naming a trashed record in any relationship, on create or in add, remove or replace, is 400 relationship_entity_inactive', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Live' } });
    const gone = {
      account: (await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Gone' } })).id as string,
      contact: (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Gone' } } })).id as string,
      opportunity: '',
    };
    gone.opportunity = (await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Gone', $stage: 'Lead' }, relationships: { $account: acc.id } })).id;
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Live', $stage: 'Lead' }, relationships: { $account: acc.id } });
    const task = await ok(s, 'POST', '/v1/tasks', { fields: { $title: 'T', $status: 'TODO' }, relationships: { $assignedTo: s.userId } });
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' } });
    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Live' } } });
    await ok(s, 'DELETE', `/v1/accounts/${gone.account}`);
    await ok(s, 'DELETE', `/v1/contacts/${gone.contact}`);
    await ok(s, 'DELETE', `/v1/opportunities/${gone.opportunity}`);
    const cases: Array<[string, unknown, string]> = [
      ['/v1/opportunities', { fields: { $name: 'D', $stage: 'Lead' }, relationships: { $account: gone.account } }, 'relationships.$account'],
      [
        '/v1/tasks',
        { fields: { $title: 'T', $status: 'TODO' }, relationships: { $assignedTo: s.userId, $opportunity: gone.opportunity } },
        'relationships.$opportunity',
      ],
      ['/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [gone.contact] } }, 'relationships.$contact[0]'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $champion: { replace: gone.contact } } }, 'relationships.$champion.replace'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $account: { replace: gone.account } } }, 'relationships.$account.replace'],
      [`/v1/tasks/${task.id}`, { relationships: { $account: { add: gone.account } } }, 'relationships.$account.add'],
      [`/v1/notes/${note.id}`, { relationships: { $opportunity: { add: [gone.opportunity] } } }, 'relationships.$opportunity.add[0]'],
      [`/v1/contacts/${con.id}`, { relationships: { $account: { remove: gone.account } } }, 'relationships.$account.remove'],
    ];
    for (const [url, body, param] of cases) await refused(s, 'POST', url, body, 400, 'relationship_entity_inactive', param);
    assert.equal((await ok(s, 'GET', '/v1/opportunities')).totalCount, 1, 'nothing was created');
    assert.deepEqual((await ok(s, 'GET', `/v1/opportunities/${opp.id}`)).relationships.$account.values, [acc.id]);
  });

  test('a merge naming a trashed, unknown or other-type record is 400 relationship_entity_missing with the param of that id', async () => {
    const s = await seedWorkspace(ctx());
    await withProject(s);
    const pairs: Array<{ url: string; make: () => Promise<{ id: string }> }> = [
      { url: '/v1/accounts', make: () => ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A' } }) },
      { url: '/v1/contacts', make: () => ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'C' } } }) },
      { url: '/v1/objects/project', make: () => ok(s, 'POST', '/v1/objects/project/values', { fields: { title: 'P' } }) },
    ];
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Holder' } });
    const deal = (name: string) => ok(s, 'POST', '/v1/opportunities', { fields: { $name: name, $stage: 'Lead' }, relationships: { $account: acc.id } });
    pairs.push({ url: '/v1/opportunities', make: () => deal('O') });
    const contact = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Other type' } } });
    for (const { url, make } of pairs) {
      const [live, gone] = [await make(), await make()];
      const deleteUrl = url.startsWith('/v1/objects/') ? `${url}/values/${gone.id}` : `${url}/${gone.id}`;
      await ok(s, 'DELETE', deleteUrl);
      const merge = `${url}/merge`;
      await refused(s, 'POST', merge, { primaryId: gone.id, duplicateId: live.id }, 400, 'relationship_entity_missing', 'primaryId');
      await refused(s, 'POST', merge, { primaryId: live.id, duplicateId: gone.id }, 400, 'relationship_entity_missing', 'duplicateId');
      const stranger = url === '/v1/contacts' ? acc.id : contact.id;
      await refused(s, 'POST', merge, { primaryId: live.id, duplicateId: stranger }, 400, 'relationship_entity_missing', 'duplicateId');
      await refused(s, 'POST', merge, { primaryId: live.id, duplicateId: live.id }, 400, 'invalid_value', 'duplicateId');
      assert.deepEqual(await ok(s, 'GET', url.startsWith('/v1/objects/') ? `${url}/values/${live.id}` : `${url}/${live.id}`), live, `${url}: nothing changed`);
    }
    await refused(s, 'POST', '/v1/objects/nope/merge', { primaryId: 'rec_x', duplicateId: 'rec_y' }, 404, 'resource_not_found');
  });

  test('a merge resolution of a read-only field, an unknown option or a key without the delete scope is refused', async () => {
    const s = await seedWorkspace(ctx());
    const [a, b] = [await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A' } }), await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B' } })];
    const body = { primaryId: a.id, duplicateId: b.id };
    await refused(
      s,
      'POST',
      '/v1/accounts/merge',
      { ...body, fieldResolutions: { $accountStatus: 'duplicate' } },
      400,
      'read_only_field',
      'fieldResolutions.$accountStatus',
    );
    await refused(s, 'POST', '/v1/accounts/merge', { ...body, options: { multiSelectUnion: true, keepBoth: true } }, 400, 'unknown_field', 'options.keepBoth');
    await refused(s, 'POST', '/v1/accounts/merge', { ...body, fieldResolutions: { $contact: 'primary' } }, 400, 'unknown_field', 'fieldResolutions.$contact');
    const updateOnly = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['accounts:update', 'accounts:read']) };
    await refused(updateOnly, 'POST', '/v1/accounts/merge', body, 403, 'insufficient_scope');
    assert.deepEqual((await ok(s, 'GET', '/v1/accounts')).totalCount, 2, 'nothing was merged');
  });

  test('an enrichment POST honours Idempotency-Key: replayed with Idempotent-Replayed, 422 for another body', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://acme.test'] } });
    const url = `/v1/enrichmentRun/accounts/${acc.id}`;
    const key = { 'idempotency-key': 'enrich-once' };
    const first = await call(ctx(), s.secret, 'POST', url, { fields: ['$linkedIn'] }, key);
    const again = await call(ctx(), s.secret, 'POST', url, { fields: ['$linkedIn'] }, key);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual([again.statusCode, again.body, again.headers['idempotent-replayed']], [200, first.body, 'true']);
    const other = await call(ctx(), s.secret, 'POST', url, { fields: ['$twitter'] }, key);
    assert.deepEqual([other.statusCode, other.json().error?.code], [422, 'idempotency_key_reused'], other.body);
    await refused(s, 'POST', url, { fields: ['$linkedIn'], extra: 1 }, 400, 'unknown_field', 'extra');
    await refused(s, 'POST', `/v1/enrichmentRun/opportunities/${acc.id}`, undefined, 404, 'route_not_found');
    // Not built (docs/conformance.md §Deliberate differences): no stub answers for it.
    await refused(s, 'GET', '/v1/workflowRun/wfr_x/status', undefined, 404, 'route_not_found');
  });
});
