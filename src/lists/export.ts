// `rolodex export` of a workspace's lists (docs/import.md §Export), as `list` import lines, oldest
// first so that the imported lists keep their order. A member is named as the record lines name
// it (its externalId, else its server id); a list without an externalId by its server id.
import type { Ctx } from '../lib/context.ts';
import { exportedIds } from '../records/export.ts';
import * as repo from './repository.ts';

const PAGE = 100;

/** `types`: only lists of these record types (an export narrowed by `--types` writes no others). */
export async function* listLines(ctx: Ctx, types?: ReadonlySet<string>): AsyncGenerator<Record<string, unknown>> {
  let after: { createdAt: string; id: string } | undefined;
  for (;;) {
    const rows = await repo.listsAfter(ctx.db, ctx.actor.workspaceId, after, PAGE);
    const last = rows.at(-1);
    if (!last) return;
    after = { createdAt: last.created_at, id: last.id };
    for (const row of rows) {
      if (types && !types.has(row.object_type)) continue;
      // A list's line holds all of its members: memory follows the largest list, not the workspace.
      const ids = await repo.memberIdsInOrder(ctx.db, row.id);
      const names = await exportedIds(ctx, ids);
      yield {
        object: 'list',
        externalId: row.external_id ?? row.id,
        name: row.name,
        objectType: row.object_type,
        members: ids.map((id) => names.get(id) ?? id),
      };
    }
  }
}
