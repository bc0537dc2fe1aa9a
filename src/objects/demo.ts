// The custom object of `rolodex demo` (docs/activities.md): a `project` type with two fields and a
// relationship to accounts, and one project of the demo account, made through the definition and
// record services (object types are defined by operators); the printed calls list, create and
// filter projects through the API.
import { defineObjectType } from '../definitions/object-types.ts';
import { addField, addRelationship } from '../definitions/service.ts';
import type { DemoPart } from '../import/demo-part.ts';
import { customRecordType } from '../records/service.ts';
import { demoCurl } from '../records/demo.ts';
import { createRecord } from '../records/service.ts';
import { write } from '../db/index.ts';

export const objectsPart: DemoPart = {
  async after(ctx) {
    const globex = ctx.imported.ids.account?.['a-globex'] as string;
    const project = await write(ctx.db, async (tx) => {
      const c = { ...ctx, db: tx };
      await defineObjectType(c, { slug: 'project', label: 'Projects' });
      await addField(c, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
      await addField(c, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'USD' });
      await addRelationship(c, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
      return createRecord(c, { type: customRecordType('project'), fields: { name: 'Volcano lair', budget: 1_000_000 }, relationships: { client: globex } });
    });
    return [
      demoCurl('GET', '/v1/notes'),
      demoCurl('GET', '/v1/objects'),
      demoCurl('GET', '/v1/objects/project/definitions'),
      demoCurl('POST', '/v1/objects/project/values', { fields: { name: 'Monorail', budget: 250_000 }, relationships: { client: globex } }),
      demoCurl('GET', `/v1/objects/project/values/${project.id}`),
      demoCurl('GET', '/v1/objects/project?budget[greaterThan]=100000'),
    ];
  },
};
