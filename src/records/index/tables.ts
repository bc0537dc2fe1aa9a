// Row type of the trigram index of `contains` filters (docs/filtering.md §Indexes).

/**
 * One posting: a record holds a trigram (three consecutive code points of the folded text) in one
 * field whose valueType is filtered with `contains` (EMAIL, TELEPHONE, URL). `key` stands for the
 * workspace, type, field and trigram (trigramKey, src/records/index/trigrams.ts); the primary key
 * (key, record_id) is the whole table (WITHOUT ROWID on SQLite). Written in the transaction of
 * every record write, next to record_values.
 */
export interface RecordTrigramsTable {
  key: number;
  record_id: string;
}

/**
 * The postings of one key written by one batch of a bulk import (docs/filtering.md §Indexes,
 * Packs): the record ids are `prefix` followed by each element of `tails` (a JSON array of
 * strings), `n` of them, the least being `first_id`. Never rewritten: a record rewritten later may
 * leave stale ids here, which a `contains` drops when it checks each candidate's values.
 */
export interface RecordTrigramPacksTable {
  key: number;
  first_id: string;
  prefix: string;
  tails: string;
  n: number;
}

/**
 * A record's value of a field whose definition lists its values (a task's `$status`), with the
 * record's createdAt: the rows of one (workspace, type, field, value) are a ranked partition
 * (docs/filtering.md §Ranked values). Written with record_values, in the same transaction.
 */
export interface RecordFacetsTable {
  workspace_id: string;
  object_type: string;
  field: string;
  value_text: string;
  created_at: string;
  record_id: string;
}

// Adds the tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../../db/types.ts' {
  interface Database {
    record_trigrams: RecordTrigramsTable;
    record_trigram_packs: RecordTrigramPacksTable;
    record_facets: RecordFacetsTable;
  }
}
