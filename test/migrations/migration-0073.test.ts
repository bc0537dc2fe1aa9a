// Migration 0073_file_parents: a file's meetings and e-mails are found from its id (docs/files.md
// §Who downloads the bytes). From a database at 0072 holding a meeting with a transcript and an
// e-mail with an attachment among 2,000 others: the links stay, and the statement that decides a
// download reads the new indexes on both databases, never every meeting's contents or every
// attachment.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { downloadParents, downloadParentsQuery } from '../../src/files/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { planText } from '../helpers/plans.ts';

const AT = '2026-01-01T00:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0073_file_parents [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0073' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${AT})`.execute(db);
      await sql`insert into users (id, workspace_id, email, role, created_at, updated_at) values ('usr_a', 'ws_f', 'a@f.test', 'member', ${AT}, ${AT})`.execute(
        db,
      );
      for (const id of ['fil_t', 'fil_e']) {
        await sql`insert into files (id, workspace_id, source, status, filename, mime_type, size_bytes, created_at, upload_deadline)
          values (${id}, 'ws_f', 'api', 'COMPLETED', 'f.txt', 'text/plain', 1, ${AT}, ${AT})`.execute(db);
      }
      await sql`insert into meetings (id, workspace_id, title, start_date, end_date, privacy_setting, created_at, updated_at)
        values ('mtg_p', 'ws_f', 'p', ${AT}, ${AT}, 'METADATA', ${AT}, ${AT})`.execute(db);
      await sql`insert into meeting_contents (meeting_id, description, transcript_id) values ('mtg_p', null, 'fil_t')`.execute(db);
      await sql`insert into mailboxes (id, workspace_id, user_id, address, others_see, created_at, updated_at)
        values ('mbx_a', 'ws_f', 'usr_a', 'a@f.test', 'METADATA', ${AT}, ${AT})`.execute(db);
      await sql`insert into emails (id, workspace_id, mailbox_id, from_address, to_json, cc_json, bcc_json, sent_at, created_at, updated_at, delivery_attempts)
        values ('eml_a', 'ws_f', 'mbx_a', 'a@f.test', '[]', '[]', '[]', ${AT}, ${AT}, ${AT}, 0)`.execute(db);
      await sql`insert into email_files (email_id, file_id, position) values ('eml_a', 'fil_e', 0)`.execute(db);
      // Many other links, so that a plan reading every row of a table costs what it would in use.
      const N = 2000;
      const n = (k: number) => String(k).padStart(5, '0');
      for (let from = 0; from < N; from += 250) {
        const ks = Array.from({ length: 250 }, (_, i) => from + i);
        await db
          .insertInto('files')
          .values(
            ks.map((k) => ({
              id: `fil_${n(k)}`,
              workspace_id: 'ws_f',
              source: 'api' as const,
              status: 'COMPLETED' as const,
              filename: 'f.txt',
              mime_type: 'text/plain',
              size_bytes: 1,
              created_at: AT,
              upload_deadline: AT,
            })),
          )
          .execute();
        await db
          .insertInto('meetings')
          .values(ks.map((k) => ({ id: `mtg_${n(k)}`, workspace_id: 'ws_f', title: 't', start_date: AT, end_date: AT, created_at: AT, updated_at: AT })))
          .execute();
        await db
          .insertInto('meeting_contents')
          .values(ks.map((k) => ({ meeting_id: `mtg_${n(k)}`, description: null, transcript_id: `fil_${n(k)}` })))
          .execute();
        await db
          .insertInto('emails')
          .values(
            ks.map((k) => ({
              id: `eml_${n(k)}`,
              workspace_id: 'ws_f',
              mailbox_id: 'mbx_a',
              from_address: 'a@f.test',
              to_json: '[]',
              cc_json: '[]',
              bcc_json: '[]',
              sent_at: AT,
              created_at: AT,
              updated_at: AT,
              delivery_attempts: 0,
            })),
          )
          .execute();
        await db
          .insertInto('email_files')
          .values(ks.map((k) => ({ email_id: `eml_${n(k)}`, file_id: `fil_${n(k)}`, position: 0 })))
          .execute();
      }
      await migrate(tdb.db);
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test('the links stay and decide as before: a workspace key reads both parents at METADATA, their owners at FULL', async () => {
      const db = tdb.db.kysely;
      const workspace = { workspaceId: 'ws_f', userId: null };
      assert.deepEqual(await downloadParents(db, workspace, undefined, 'fil_t'), { linked: true, full: false, knowledgeOwner: null });
      assert.deepEqual(await downloadParents(db, workspace, undefined, 'fil_e'), { linked: true, full: false, knowledgeOwner: null });
      assert.deepEqual(await downloadParents(db, { workspaceId: 'ws_f', userId: 'usr_a' }, 'a@f.test', 'fil_e'), {
        linked: true,
        full: true,
        knowledgeOwner: null,
      });
    });

    test("the statement that decides a download finds the file's parents through the new indexes", async () => {
      const db = tdb.db.kysely;
      const compiled = downloadParentsQuery({ workspaceId: 'ws_f', userId: 'usr_a' }, 'a@f.test', 'fil_t').compile(db);
      const plan = await planText(db, dialect, compiled);
      assert.match(plan, /meeting_contents_transcript/, plan);
      assert.match(plan, /email_files_file/, plan);
      // SQLite names a full read of a table `SCAN <table>`; PostgreSQL `Seq Scan on`, or a whole index read with a `Filter`.
      assert.doesNotMatch(plan, /SCAN (c|ef|meeting_contents|email_files)\b|Seq Scan on (meeting_contents|email_files)/, plan);
    });
  });
}
