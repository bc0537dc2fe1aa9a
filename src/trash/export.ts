// `rolodex export --include-trash` (docs/import.md §Export): records in the trash are written as
// live ones are, after the live records of their type, and the relationship rows the trash holds
// count as the links of their source, live or trashed, as the memberships it holds count as members
// of their lists. The import format has no trash: imported, such records are live.
import { loadDefinitions } from '../definitions/service.ts';
import { recordOf, type TrashClashes } from './export-clashes.ts';
import type { FileNames } from '../files/export.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPagesBy } from '../lib/paging.ts';
import { type HeldRows, type Line, pageLines } from '../records/export.ts';
import * as repo from './repository.ts';

const PAGE = 500;

/**
 * What the trash holds for an export's lines: links of given sources, names of trashed records
 * (`clashes`: the externalIds they keep).
 */
export function heldRows(ctx: Ctx, clashes: TrashClashes): HeldRows {
  return {
    links: (sourceIds) => repo.heldLinksFrom(ctx.db, sourceIds),
    members: (listId) => repo.heldMembersOf(ctx.db, listId),
    async names(ids) {
      const out = new Map<string, string>();
      for (const entry of await repo.trashedRecords(ctx.db, ctx.actor.workspaceId, ids)) {
        const row = recordOf(entry);
        if (row) out.set(row.id, clashes.name(row));
      }
      return out;
    },
  };
}

/**
 * The trashed records of one type (a system kind or a custom type's slug), a page at a time, each
 * with what `clashes` lets it keep; `files`: with their links to files.
 */
export async function* trashedRecordLines(
  ctx: Ctx,
  type: string,
  system: boolean,
  held: HeldRows,
  clashes: TrashClashes,
  files?: FileNames,
): AsyncGenerator<Line> {
  const defs = await loadDefinitions(ctx, { objectType: type });
  if (!defs) return;
  const page = (after: { deletedAt: string; id: string } | undefined) => repo.trashedRecordsPage(ctx.db, ctx.actor.workspaceId, type, after, PAGE);
  for await (const entries of keysetPagesBy(page, (entry) => ({ deletedAt: entry.deleted_at, id: entry.id }))) {
    const rows = [];
    for (const row of entries.map(recordOf)) if (row) rows.push(await clashes.kept(row));
    yield* pageLines(ctx, defs, rows, system, held, files);
  }
}
