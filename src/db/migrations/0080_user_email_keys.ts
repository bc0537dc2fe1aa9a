import type { Kysely } from 'kysely';
import { emailKey } from '../../lib/email.ts';
import { noteMigration } from '../migration-notes.ts';

// A user's e-mail address is one address whichever form its domain is written in, as a record's is
// (docs/design.md §Members, docs/records.md §E-mail addresses): `users.email_key` holds its key
// (emailKey), unique in the workspace, and creating a user or looking one up by address compares
// it. The users stored before are read 500 at a time in id order (ids sort by creation, as in 0078)
// and given their key; a user whose key an earlier user of the workspace holds (the two spellings
// of one internationalized domain, stored as two users) keeps its row and its address but no key:
// the earlier one is the address's user, the later one is found by its id and externalId, and the
// migration counts them. Nothing is dropped and nothing fails.
const BATCH = 500;
const NAME = '0080_user_email_keys';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_key', 'text').execute();
  await db.schema.createIndex('users_workspace_email_key').on('users').columns(['workspace_id', 'email_key']).unique().execute();
  let clashes = 0;
  for (let after = ''; ;) {
    const rows: { id: string; workspace_id: string; email: string }[] = await db
      .selectFrom('users')
      .select(['id', 'workspace_id', 'email'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    after = rows.at(-1)!.id;
    for (const r of rows) {
      const key = emailKey(r.email);
      const holder = await db.selectFrom('users').select('id').where('workspace_id', '=', r.workspace_id).where('email_key', '=', key).executeTakeFirst();
      if (holder) clashes++;
      else await db.updateTable('users').set({ email_key: key }).where('id', '=', r.id).execute();
    }
  }
  if (clashes > 0)
    noteMigration({
      migration: NAME,
      message: `${clashes} users hold the address of an earlier user of their workspace in another form of its domain: both kept, the earlier one is the address's user`,
      counts: { clashes },
    });
}
