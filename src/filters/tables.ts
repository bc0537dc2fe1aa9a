// Row type of the trigram index of `contains` filters (docs/filtering.md §Indexes).

/**
 * One row per distinct trigram (three consecutive code points of the folded text) of one field of
 * one record, for the fields whose valueType is filtered with `contains` (EMAIL, TELEPHONE, URL).
 * Written in the transaction of every record write, next to record_values.
 */
export interface RecordTrigramsTable {
  workspace_id: string;
  object_type: string;
  field: string;
  trigram: string;
  record_id: string;
}

// Adds the table to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    record_trigrams: RecordTrigramsTable;
  }
}
