// Lists of `rolodex demo`, made after the import from the records it made, through the list
// service, which checks the members as an API request's would.
import type { DemoPart } from '../import/demo-part.ts';
import { createList } from './service.ts';
import { write } from '../db/index.ts';

export const listsPart: DemoPart = {
  async after(ctx) {
    const ids = (kind: string, ...ext: string[]) => ext.map((e) => ctx.imported.ids[kind]?.[e] as string);
    const made = await write(ctx.db, async (tx) => {
      const c = { ...ctx, db: tx };
      return [
        await createList(c, {
          fields: { $name: 'Key accounts', $objectType: 'account' },
          relationships: { $accounts: ids('account', 'a-globex', 'a-initech') },
        }),
        await createList(c, {
          fields: { $name: 'Newsletter', $objectType: 'contact' },
          relationships: { $contacts: ids('contact', 'c-hank', 'c-peter', 'c-milton') },
        }),
        await createList(c, {
          fields: { $name: 'Q3 pipeline', $objectType: 'opportunity' },
          relationships: { $opportunities: ids('opportunity', 'o-doomsday') },
        }),
      ];
    });
    const contacts = made[1]?.id as string;
    return [
      `curl -s -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" {base}/v1/lists`,
      `curl -s -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" "{base}/v1/lists/${contacts}/contacts?limit=2"`,
      `curl -s -X POST -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" -H "Content-Type: application/json" -H "Idempotency-Key: demo-1" -d '{"fields":{"$name":"VIPs","$objectType":"contact"}}' {base}/v1/lists`,
    ];
  },
};
