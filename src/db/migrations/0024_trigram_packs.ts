import { type Kysely, sql } from 'kysely';

// Packed postings of the trigram index (docs/filtering.md §Indexes, Packs): a bulk import writes
// the postings of each key as one row for every pack of postings it gathers (`PACKS`,
// src/records/index/repository.ts), the record ids under that key, instead of one row per posting
// (some 37 million rows at 1,000,000 contacts). The ids share most of their characters (an
// import's ids share kind and time, docs/import.md §Speed), so a row keeps their common prefix
// once and the rest as a JSON array. `first_id` (the least id) makes each row's key unique; `n`
// counts the ids, for choosing a needle's rarest trigram.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = sql`${0}`.compile(db).sql === '$1';
  await sql`create table record_trigram_packs (key bigint not null, first_id text not null, prefix text not null, tails text not null,
    n integer not null, primary key (key, first_id)) ${sql.raw(pg ? '' : 'without rowid')}`.execute(db);
}
