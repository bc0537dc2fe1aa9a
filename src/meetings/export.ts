// `rolodex export` of a workspace's meetings (docs/import.md §Export), as `meeting` import lines,
// paged by keyset. A line holds every field as a full-access key reads it, with the resource's
// valueTypes; a meeting without an externalId is exported under its server id. The transcript (a
// file link) and the derived relationships are not written: the import links no files, and derives
// the relationships again from the participants' addresses.
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { meetingsAfter } from './export-repository.ts';
import { toResource } from './service.ts';

const PAGE = 500;
const NO_DERIVED = { contact: [], account: [], opportunity: [] };

export async function* meetingLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => meetingsAfter(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    for (const { description, ...row } of rows) {
      const { fields } = toResource(ctx, row, 'FULL', { meeting_id: row.id, description, transcript_id: null }, NO_DERIVED);
      yield { object: 'meeting', externalId: row.external_id ?? row.id, fields };
    }
  }
}
