// The reads of `rolodex export` of meetings (docs/import.md §Export): the workspace's meetings in
// id order, a page at a time, each with its description and transcript. The meetings table holds
// no meeting in the trash, so none is read.
import type { Executor } from '../db/index.ts';
import type { MeetingRow } from './repository.ts';

export type ExportedMeeting = MeetingRow & { description: string | null; transcript_id: string | null };

/** Up to `limit` of the workspace's meetings whose id is after `after`, in id order. */
export function meetingsAfter(db: Executor, workspaceId: string, after: string, limit: number): Promise<ExportedMeeting[]> {
  return db
    .selectFrom('meetings as m')
    .leftJoin('meeting_contents as c', 'c.meeting_id', 'm.id')
    .selectAll('m')
    .select(['c.description', 'c.transcript_id'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.id', '>', after)
    .orderBy('m.id')
    .limit(limit)
    .execute();
}
