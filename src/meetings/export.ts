// `rolodex export` of a workspace's meetings (docs/import.md §Export), as `meeting` import lines,
// paged by keyset. A line holds every field as a full-access key reads it, with the resource's
// valueTypes; a meeting without an externalId is exported under its server id. Its transcript is
// written (`relationships.$transcript`) only when the export writes the files (`files`), named as
// the `file` lines name them, so every transcript written finds its file on import; without, a line
// names none and the imported meeting has none. The derived relationships are not written: the
// import derives them again from the participants' addresses.
import { type FileNames, namedLinks } from '../files/export.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { meetingsAfter } from './export-repository.ts';
import { toResource } from './service.ts';

const PAGE = 500;
const NO_DERIVED = { contact: [], account: [], opportunity: [] };

export async function* meetingLines(ctx: Ctx, files?: FileNames): AsyncGenerator<Record<string, unknown>> {
  for await (const rows of keysetPages((after) => meetingsAfter(ctx.db, ctx.actor.workspaceId, after, PAGE))) {
    const transcripts = await namedLinks(files, async () => new Map(rows.flatMap((m) => (m.transcript_id === null ? [] : [[m.id, [m.transcript_id]]]))));
    for (const { description, transcript_id, ...row } of rows) {
      const { fields } = toResource(ctx, row, 'FULL', { meeting_id: row.id, description, transcript_id }, NO_DERIVED);
      const values = transcripts.get(row.id) ?? [];
      yield {
        object: 'meeting',
        externalId: row.external_id ?? row.id,
        fields,
        ...(values.length > 0 ? { relationships: { $transcript: { objectType: 'file', values } } } : {}),
      };
    }
  }
}
