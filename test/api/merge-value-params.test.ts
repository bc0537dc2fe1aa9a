// The `param` of a merge refused for a `{"value"}` resolution names the offending input's place in
// the body (docs/errors.md, docs/merge.md §Fields), on both databases: the resolution
// (`fieldResolutions.<key>`) when the value as a whole is refused, the member or item below
// `value` when one inside it is (`fieldResolutions.<key>.value.latitude`, `…value[1]`), so that
// every param a client gets back finds something in what it sent; nothing is merged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

/** The value at `path` (`a.b[1].c`) in `body`, or undefined when the path names nothing there. */
function at(body: unknown, path: string): unknown {
  let v: unknown = body;
  for (const [, key, index] of path.matchAll(/\.?([^.[\]]+)|\[(\d+)\]/g)) {
    if (v === null || typeof v !== 'object') return undefined;
    const k = key ?? index!;
    if (!Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

eachDialect('merge: params of refused resolution values', (ctx) => {
  test('each param names the place of the refused input in the body', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'where', label: 'Where', valueType: 'ADDRESS' });
    await addField(op, { objectType: 'project', key: 'who', label: 'Who', valueType: 'FULL_NAME' });
    await addField(op, { objectType: 'project', key: 'n', label: 'N', valueType: 'NUMBER' });
    const make = async (url: string, body: unknown): Promise<string> => {
      const res = await call(t, s.secret, 'POST', url, body);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().id;
    };
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['/v1/contacts', { $email: { value: ['ok@x.test', 'not an address'] } }, 'invalid_value', 'fieldResolutions.$email.value[1]'],
      ['/v1/accounts', { $industry: { value: ['Software', 'No such industry'] } }, 'invalid_value', 'fieldResolutions.$industry.value[1]'],
      ['/v1/objects/project/values', { where: { value: { city: 'Berlin', latitude: 91 } } }, 'invalid_value', 'fieldResolutions.where.value.latitude'],
      ['/v1/objects/project/values', { who: { value: { firstName: 'Ann', middle: 'B' } } }, 'unknown_field', 'fieldResolutions.who.value.middle'],
      ['/v1/objects/project/values', { who: { value: {} } }, 'invalid_value', 'fieldResolutions.who'],
      ['/v1/objects/project/values', { n: { value: '5' } }, 'invalid_type', 'fieldResolutions.n'],
    ];
    for (const [base, fieldResolutions, code, param] of cases) {
      const create =
        base === '/v1/contacts' ? { fields: { $name: { firstName: 'A' } } } : base === '/v1/accounts' ? { fields: { $name: 'A' } } : { fields: {} };
      const [primaryId, duplicateId] = [await make(base, create), await make(base, create)];
      const body = { primaryId, duplicateId, fieldResolutions };
      const url = base === '/v1/objects/project/values' ? '/v1/objects/project/merge' : `${base}/merge`;
      const res = await call(t, s.secret, 'POST', url, body);
      assert.equal(res.statusCode, 400, res.body);
      const error = res.json().error;
      assert.deepEqual([error.code, error.param], [code, param], res.body);
      assert.notEqual(at(body, error.param), undefined, `${error.param} names nothing in ${JSON.stringify(body)}`);
      assert.ok(!error.message.includes('"fieldResolutions.') || error.message.includes(`"${param}"`), error.message);
      assert.equal((await call(t, s.secret, 'GET', `${base}/${duplicateId}`)).statusCode, 200, 'nothing was merged');
    }
  });
});
