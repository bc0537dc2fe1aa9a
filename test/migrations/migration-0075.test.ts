// Migration 0075_message_file_parents: a file's messages are found from its id (docs/files.md
// §Who downloads the bytes). From a database at 0074 holding a restricted channel's message with a
// file among 2,000 other messages' files: the links stay and decide as before, and the statement
// that decides a download reads the new index on both databases, never every message's files.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { downloadParents, downloadParentsQuery } from '../../src/files/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { planText } from '../helpers/plans.ts';

const AT = '2026-01-01T00:00:00.000Z';

for (const dialect of testDialects()) {
  describe(`migration 0075_message_file_parents [${dialect}]`, () => {
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0075' });
      const db = tdb.db.kysely;
      await sql`insert into workspaces (id, name, created_at) values ('ws_f', 'f', ${AT})`.execute(db);
      await sql`insert into users (id, workspace_id, email, role, created_at, updated_at) values ('usr_a', 'ws_f', 'a@f.test', 'member', ${AT}, ${AT})`.execute(
        db,
      );
      await db
        .insertInto('channels')
        .values({ id: 'chn_r', workspace_id: 'ws_f', provider: 'slack', name: 'r', visibility: 'restricted', message_count: 0, created_at: AT, updated_at: AT })
        .execute();
      await db.insertInto('channel_members').values({ channel_id: 'chn_r', user_id: 'usr_a', created_at: AT }).execute();
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
          .insertInto('messages')
          .values(
            ks.map((k) => ({
              id: `msg_${n(k)}`,
              workspace_id: 'ws_f',
              channel_id: 'chn_r',
              channel_visibility: 'restricted' as const,
              sent_at: AT,
              provider: 'slack',
              text_type: 'TEXT' as const,
              created_at: AT,
              updated_at: AT,
            })),
          )
          .execute();
        await db
          .insertInto('message_files')
          .values(ks.map((k) => ({ message_id: `msg_${n(k)}`, file_id: `fil_${n(k)}`, position: 0 })))
          .execute();
      }
      await migrate(tdb.db);
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    test("the links stay and decide: a workspace key reads the restricted channel's file at METADATA, its member at FULL", async () => {
      const db = tdb.db.kysely;
      assert.deepEqual(await downloadParents(db, { workspaceId: 'ws_f', userId: null }, undefined, 'fil_00007'), {
        linked: true,
        full: false,
        knowledgeOwner: null,
      });
      assert.deepEqual(await downloadParents(db, { workspaceId: 'ws_f', userId: 'usr_a' }, 'a@f.test', 'fil_00007'), {
        linked: true,
        full: true,
        knowledgeOwner: null,
      });
    });

    test("the statement that decides a download finds the file's messages through the new index", async () => {
      const db = tdb.db.kysely;
      const compiled = downloadParentsQuery({ workspaceId: 'ws_f', userId: 'usr_a' }, 'a@f.test', 'fil_00007').compile(db);
      const plan = await planText(db, dialect, compiled);
      assert.match(plan, /message_files_file/, plan);
      // SQLite names a full read of a table `SCAN <table>`; PostgreSQL `Seq Scan on`.
      assert.doesNotMatch(plan, /SCAN (mf|m|message_files|messages)\b|Seq Scan on (message_files|messages)/, plan);
    });
  });
}
