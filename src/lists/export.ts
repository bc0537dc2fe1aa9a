// `rolodex export` of a workspace's lists (docs/import.md §Export), as `list` import lines, oldest
// first so that the imported lists keep their order. A member is named as the record lines name
// it (its externalId, else its server id); a list without an externalId by its server id.
import type { Ctx } from '../lib/context.ts';
import { keysetPagesBy } from '../lib/paging.ts';
import { exportedIds, type HeldRows } from '../records/export.ts';
import * as repo from './repository.ts';

const PAGE = 100;

/**
 * `types`: only lists of these record types (an export narrowed by `--types` writes no others);
 * `held` (`--include-trash`): the memberships the trash holds for trashed members count too.
 */
export async function* listLines(ctx: Ctx, types?: ReadonlySet<string>, held?: HeldRows): AsyncGenerator<Record<string, unknown>> {
  const page = (after: { createdAt: string; id: string } | undefined) => repo.listsAfter(ctx.db, ctx.actor.workspaceId, after, PAGE);
  for await (const rows of keysetPagesBy(page, (row) => ({ createdAt: row.created_at, id: row.id }))) {
    for (const row of rows) {
      if (types && !types.has(row.object_type)) continue;
      // A list's line holds all of its members: memory follows the largest list, not the workspace.
      const live = await repo.membersInOrder(ctx.db, row.id);
      const all = held ? [...live, ...(await held.members(row.id))].toSorted(byJoining) : live;
      const ids = all.map((m) => m.entity_id);
      const names = await exportedIds(ctx, ids, held);
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

type Joined = { entity_id: string; added_at: string };
const byJoining = (a: Joined, b: Joined) =>
  a.added_at < b.added_at ? -1 : a.added_at > b.added_at ? 1 : a.entity_id < b.entity_id ? -1 : a.entity_id > b.entity_id ? 1 : 0;
