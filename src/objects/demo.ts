// The custom object of `rolodex demo` (docs/activities.md): a `project` type with two fields and a
// relationship to accounts, and one project of the demo account, made through the definition and
// record services (object types are defined by operators, not imported); sample calls for the
// demo note and task too.
import { defineObjectType } from '../definitions/object-types.ts';
import { addField, addRelationship } from '../definitions/service.ts';
import type { DemoPart } from '../import/demo-part.ts';
import { customEntityType } from '../records/entities.ts';
import { createRecord } from '../records/entity-writes.ts';

export const objectsPart: DemoPart = {
  async after(ctx) {
    const globex = ctx.imported.ids.account?.['a-globex'] as string;
    const project = await ctx.db.transaction().execute(async (tx) => {
      const c = { ...ctx, db: tx };
      await defineObjectType(c, { slug: 'project', label: 'Projects' });
      await addField(c, { objectType: 'project', key: 'name', label: 'Name', valueType: 'TEXT' });
      await addField(c, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'USD' });
      await addRelationship(c, { objectType: 'project', key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
      return createRecord(c, customEntityType('project'), { fields: { name: 'Volcano lair', budget: 1_000_000 }, relationships: { client: globex } });
    });
    const h = `-H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01"`;
    return [
      `curl -s ${h} {base}/v1/notes`,
      `curl -s ${h} {base}/v1/tasks`,
      `curl -s ${h} {base}/v1/objects`,
      `curl -s ${h} {base}/v1/objects/project/values/${project.id}`,
    ];
  },
};
