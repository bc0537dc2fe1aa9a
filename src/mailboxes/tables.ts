// Row types of the tables this module owns.
export type OthersSee = 'FULL' | 'METADATA';

export interface MailboxesTable {
  id: string;
  workspace_id: string;
  /** The owner: their key reads the mailbox's mail at FULL and may send from it. */
  user_id: string;
  /** Lower-cased. */
  address: string;
  /** What every other user key and every workspace key reads of its mail. */
  others_see: OthersSee;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  removed_at: string | null;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    mailboxes: MailboxesTable;
  }
}
