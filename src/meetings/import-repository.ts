// SQL of the meeting import's reads (docs/import.md §`meeting`, §Sharing the database): the
// meetings a chunk rewrites, read locked for it.
import { chunks, lockedForChange, type Tx } from '../db/index.ts';
import { byName, named } from '../import/repository.ts';
import { type ContentsRow, contentsOf, lockMeetings, type MeetingRow, type StoredMeeting } from './repository.ts';

/**
 * The workspace's meetings that these names name (docs/import.md §Export), with their contents,
 * by name, locked as an update through the API locks its meeting (`findMeetingToChange`): on
 * PostgreSQL an update or a delete of one that commits first is waited for and read as it left
 * it, and one that comes later waits for the import's commit, so no change is written back over
 * nor reported from a value already replaced.
 *
 * The workspace's meetings listing is taken first, then the rows (in id order), as a delete takes
 * them (docs/meetings.md §Writes, "The order of locks"). The contents are read once the rows are
 * locked, by a statement of their own: a locking read returns the newest version of a row it
 * waited for, but the rows it joins as its snapshot held them, before that writer committed.
 */
export async function meetingsToChange(tx: Tx, workspaceId: string, names: readonly string[]): Promise<Map<string, StoredMeeting>> {
  if (names.length === 0) return new Map();
  await lockMeetings(tx, workspaceId);
  const rows = await byName(names, (part, by) =>
    lockedForChange(
      tx,
      tx
        .selectFrom('meetings as m')
        .selectAll('m')
        .where('m.workspace_id', '=', workspaceId)
        .where(named(by, part, 'm'))
        .orderBy('m.id'),
    ).execute(),
  );
  const contents = new Map<string, ContentsRow>();
  for (const part of chunks([...rows.values()].map((r) => r.id))) for (const [id, c] of await contentsOf(tx, part)) contents.set(id, c);
  const stored = (r: MeetingRow): StoredMeeting => ({
    ...r,
    description: contents.get(r.id)?.description ?? null,
    transcript_id: contents.get(r.id)?.transcript_id ?? null,
  });
  return new Map([...rows].map(([name, r]) => [name, stored(r)]));
}
