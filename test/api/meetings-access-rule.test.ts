// The meetings' FULL access rule (docs/meetings.md §Who sees what) over a generated table of
// cases, on both databases: every read that resolves it gives the table's answer. The rule is
// written as SQL (src/meetings/repository.ts fullAccessSql) and, for a page's rows already read,
// as pageFullAccess; here each of its uses is held to the table: a page's (pageFullAccess), an
// update's and a trash entry's (fullAccessOf, on the participants stored or held), and a
// transcript download's (downloadParents), of a live meeting and of one in the trash.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { downloadParents } from '../../src/files/repository.ts';
import { fullAccessOf, pageFullAccess } from '../../src/meetings/repository.ts';
import type { PrivacySetting } from '../../src/meetings/tables.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const AT = '2026-01-01T00:00:00.000Z';
const WS = 'wsp_rule';
const PEOPLE = ['ann@x.test', 'bob@x.test', 'cy@x.test'];

interface Case {
  privacy: PrivacySetting | null;
  participants: string[];
}

/** The table of docs/meetings.md §Who sees what: FULL unless METADATA and the caller takes no part. */
const readsAtFull = (m: Case, email: string | undefined) => m.privacy !== 'METADATA' || (email !== undefined && m.participants.includes(email));

const meetingCase = fc.record({
  privacy: fc.constantFrom<PrivacySetting | null>(null, 'FULL', 'METADATA'),
  participants: fc.uniqueArray(fc.constantFrom(...PEOPLE), { maxLength: 3 }),
});
// A participant, a member who takes part in none, or a workspace key (no address).
const caller = fc.constantFrom<string | undefined>(...PEOPLE, 'dee@x.test', undefined);

for (const dialect of testDialects()) {
  describe(`the meetings' FULL access rule over generated cases [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect);
      await tdb.db.kysely.insertInto('workspaces').values({ id: WS, name: 'W', created_at: AT }).execute();
    });
    after(() => tdb.drop());

    test('a page, a trash entry and a transcript download, live or in the trash, each give the table', async () => {
      const db = tdb.db.kysely;
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(meetingCase, { minLength: 1, maxLength: 4 }), caller, async (cases, email) => {
          const run = ++n;
          const ids = cases.map((_, i) => `mtg_${run}_${i}`);
          for (const [i, m] of cases.entries()) {
            const id = ids[i] as string;
            await db
              .insertInto('meetings')
              .values({
                id,
                workspace_id: WS,
                external_id: null,
                title: 'T',
                start_date: AT,
                end_date: AT,
                meeting_url: null,
                organizer_email: null,
                attendee_emails: null,
                privacy_setting: m.privacy,
                created_at: AT,
                updated_at: AT,
              })
              .execute();
            await db
              .insertInto('meeting_contents')
              .values({ meeting_id: id, description: null, transcript_id: `fil_${id}` })
              .execute();
            await db
              .insertInto('trash_transcripts')
              .values({ id: `trs_${id}`, workspace_id: WS, file_id: `fil_trs_${id}`, privacy_setting: m.privacy })
              .execute();
            if (m.participants.length > 0) {
              await db
                .insertInto('meeting_participants')
                .values(m.participants.map((p) => ({ meeting_id: id, workspace_id: WS, email: p })))
                .execute();
              await db
                .insertInto('trash_participants')
                .values(m.participants.map((p) => ({ meeting_id: `trs_${id}`, email: p })))
                .execute();
            }
          }
          const expected = ids.filter((_, i) => readsAtFull(cases[i] as Case, email));
          const rows = cases.map((m, i) => ({ id: ids[i] as string, privacy_setting: m.privacy }));
          const live = await fullAccessOf(db, rows, email);
          assert.deepEqual([...live].sort(), expected, 'an update: the participants stored');
          const page = await pageFullAccess(db, rows, email);
          assert.deepEqual([...page].sort(), expected, 'a page: the participants stored');
          const held = await fullAccessOf(db, rows, email, new Map(cases.map((m, i) => [ids[i] as string, m.participants])));
          assert.deepEqual([...held].sort(), expected, 'a trash entry: the participants it holds');
          const who = { workspaceId: WS, userId: email === undefined ? null : 'usr_x' };
          for (const id of ids) {
            for (const file of [`fil_${id}`, `fil_trs_${id}`]) {
              const parents = await downloadParents(db, who, email, file);
              assert.equal(parents.linked, true, file);
              assert.equal(parents.full, expected.includes(id), `the download of ${file}`);
            }
          }
        }),
        { numRuns: 40 },
      );
    });
  });
}
