// Row types of the tables this module owns. Message text lives in its own table so that the
// visibility walk never touches it and a METADATA row is never even read with its text.
import type { Visibility } from '../channels/tables.ts';

export type TextType = 'TEXT' | 'HTML';

export interface MessagesTable {
  id: string;
  workspace_id: string;
  channel_id: string;
  /** Copy of the channel's visibility, for the page walk; the channel row stays the authority. */
  channel_visibility: Visibility;
  external_id: string | null;
  sent_at: string;
  edited_at: string | null;
  provider: string;
  provider_thread_id: string | null;
  text_type: TextType;
  created_at: string;
  updated_at: string;
}

export interface MessageTextsTable {
  message_id: string;
  text: string;
}

export interface MessageFilesTable {
  message_id: string;
  file_id: string;
  position: number;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    messages: MessagesTable;
    message_texts: MessageTextsTable;
    message_files: MessageFilesTable;
  }
}
