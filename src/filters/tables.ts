// Row type of the trigram index of `contains` filters (docs/filtering.md §Indexes).

/**
 * One posting: a record holds a trigram (three consecutive code points of the folded text) in one
 * field whose valueType is filtered with `contains` (EMAIL, TELEPHONE, URL). `key` stands for the
 * workspace, type, field and trigram (trigramKey, src/filters/trigrams.ts); the primary key
 * (key, record_id) is the whole table (WITHOUT ROWID on SQLite). Written in the transaction of
 * every record write, next to record_values.
 */
export interface RecordTrigramsTable {
  key: number;
  record_id: string;
}

// Adds the table to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    record_trigrams: RecordTrigramsTable;
  }
}
