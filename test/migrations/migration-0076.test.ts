// Migration 0076_trash_transcripts: a meeting already in the trash keeps its transcript's bytes to
// who read it at FULL (docs/files.md §Who downloads the bytes). From a database at 0075 holding a
// private meeting in the trash with a transcript, an open one, one with no transcript and 2,000
// others: each entry's transcript link, privacy and participants come from its payload, the
// download is decided as for a live meeting, and the statement that decides it reads the new index
// on both databases, never every held transcript.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { downloadParents, downloadParentsQuery } from '../../src/files/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { planText } from '../helpers/plans.ts';

const AT = '2026-01-01T00:00:00.000Z';

/** A meeting's trash entry as trashMeeting writes it (src/trash/service.ts TrashPayload). */
function entry(id: string, privacy: string | null, transcript: string | null, participants: string[]) {
  const row = { id, workspace_id: 'ws_f', title: 't', start_date: AT, end_date: AT, privacy_setting: privacy, created_at: AT, updated_at: AT };
  const contents = { meeting_id: id, description: null, transcript_id: transcript };
  return {
    id,
    workspace_id: 'ws_f',
    object_type: 'meeting',
    deleted_at: AT,
    merged_into: null,
    resource: '{}',
    payload: JSON.stringify({ meeting: { row, contents, participants } }),
  };
}

for (const dialect of testDialects()) {
  describe(`migration 0076_trash_transcripts [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0076' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${AT})`.execute(db);
      const entries = [
        entry('mtg_p', 'METADATA', 'fil_p', ['a@f.test', 'b@f.test', 'a@f.test']),
        entry('mtg_o', null, 'fil_o', ['a@f.test']),
        entry('mtg_n', 'METADATA', null, ['a@f.test']),
      ];
      const n = (k: number) => String(k).padStart(5, '0');
      for (let k = 0; k < 2000; k++) entries.push(entry(`mtg_${n(k)}`, 'METADATA', `fil_${n(k)}`, [`u${k}@f.test`]));
      for (let from = 0; from < entries.length; from += 250)
        await db
          .insertInto('trash')
          .values(entries.slice(from, from + 250))
          .execute();
      await migrate(tdb.db);
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test("each meeting entry's transcript is held with its privacy and participants; one with none holds nothing", async () => {
      const db = tdb.db.kysely;
      assert.equal(
        Number(
          (
            await db
              .selectFrom('trash_transcripts')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
        2002,
      );
      const held = await db.selectFrom('trash_transcripts').selectAll().where('id', 'in', ['mtg_p', 'mtg_n']).execute();
      assert.deepEqual(
        held.map((r) => ({ ...r })),
        [{ id: 'mtg_p', workspace_id: 'ws_f', file_id: 'fil_p', privacy_setting: 'METADATA' }],
      );
      const people = await db.selectFrom('trash_participants').select('email').where('meeting_id', '=', 'mtg_p').orderBy('email').execute();
      assert.deepEqual(
        people.map((p) => p.email),
        ['a@f.test', 'b@f.test'],
      );
    });

    test('the download is decided as for the live meeting: its participants at FULL, others not; an open one for everyone', async () => {
      const db = tdb.db.kysely;
      const workspace = { workspaceId: 'ws_f', userId: null };
      const other = { workspaceId: 'ws_f', userId: 'usr_c' };
      assert.deepEqual(await downloadParents(db, workspace, undefined, 'fil_p'), { linked: true, full: false, knowledgeOwner: null });
      assert.deepEqual(await downloadParents(db, other, 'c@f.test', 'fil_p'), { linked: true, full: false, knowledgeOwner: null });
      assert.deepEqual(await downloadParents(db, other, 'b@f.test', 'fil_p'), { linked: true, full: true, knowledgeOwner: null });
      assert.deepEqual(await downloadParents(db, workspace, undefined, 'fil_o'), { linked: true, full: true, knowledgeOwner: null });
    });

    test('the statement that decides a download finds held transcripts through the new index', async () => {
      const db = tdb.db.kysely;
      const compiled = downloadParentsQuery({ workspaceId: 'ws_f', userId: 'usr_a' }, 'a@f.test', 'fil_00007').compile(db);
      const plan = await planText(db, dialect, compiled);
      assert.match(plan, /trash_transcripts_file/, plan);
      // SQLite names a full read of a table `SCAN <table>`; PostgreSQL `Seq Scan on`.
      assert.doesNotMatch(plan, /SCAN (tt|p|trash_transcripts|trash_participants)\b|Seq Scan on (trash_transcripts|trash_participants)/, plan);
    });
  });
}
