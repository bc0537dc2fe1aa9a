import { type Kysely, sql } from 'kysely';
import { sortPostings } from '../../filters/repository.ts';
import { keyScope, trigramKey } from '../../filters/trigrams.ts';

const BATCH = 5000;

interface OldRow {
  workspace_id: string;
  object_type: string;
  field: string;
  trigram: string;
  record_id: string;
}

// The compact trigram index (docs/filtering.md §Indexes): one posting is (key, record_id), the key
// a 53-bit hash of workspace, type, field and trigram, and the primary key is the whole table
// (WITHOUT ROWID on SQLite), with no index by record. The rows of migration 0012's layout are
// converted in the order of its lookup index, then that table and its two indexes are dropped.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = sql`${0}`.compile(db).sql === '$1';
  await sql`alter table record_trigrams rename to record_trigrams_0012`.execute(db);
  await sql`create table record_trigrams (key bigint not null, record_id text not null, primary key (key, record_id))
    ${sql.raw(pg ? '' : 'without rowid')}`.execute(db);
  let after: OldRow | null = null;
  for (;;) {
    const from: OldRow | null = after;
    const rows = (await db
      .selectFrom('record_trigrams_0012')
      .select(['workspace_id', 'object_type', 'field', 'trigram', 'record_id'])
      .$if(from !== null, (q) =>
        q.where(
          sql<boolean>`(workspace_id, object_type, field, trigram, record_id) > (${from!.workspace_id}, ${from!.object_type}, ${from!.field}, ${from!.trigram}, ${from!.record_id})`,
        ),
      )
      .orderBy('workspace_id')
      .orderBy('object_type')
      .orderBy('field')
      .orderBy('trigram')
      .orderBy('record_id')
      .limit(BATCH)
      .execute()) as OldRow[];
    if (rows.length === 0) break;
    const postings = rows.map((r) => ({ key: trigramKey(keyScope(r.workspace_id, r.object_type, r.field), r.trigram), record_id: r.record_id }));
    // Two trigrams of one record may share a key (docs/filtering.md §Indexes): one posting.
    for (let i = 0; i < postings.length; i += 2000) {
      const part = sortPostings(postings.slice(i, i + 2000));
      const values = sql.join(part.map((p) => sql`(${p.key}, ${p.record_id})`));
      await sql`insert into record_trigrams (key, record_id) values ${values} on conflict do nothing`.execute(db);
    }
    if (rows.length < BATCH) break;
    after = rows.at(-1)!;
  }
  await sql`drop table record_trigrams_0012`.execute(db);
}
