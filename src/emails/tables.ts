// Row types of the tables this module owns. Bodies live in their own table so that a METADATA
// read never touches one; drafts live apart from e-mails, which are only what was sent or received.
export type DeliveryStatus = 'queued' | 'sent' | 'logged' | 'failed';

export interface EmailsTable {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  external_id: string | null;
  from_address: string;
  /** JSON arrays of addresses. */
  to_json: string;
  cc_json: string;
  bcc_json: string;
  subject: string | null;
  sent_at: string;
  created_at: string;
  updated_at: string;
  /** null for imported mail, which is never delivered. */
  delivery_status: DeliveryStatus | null;
  delivery_attempts: number;
  delivered_at: string | null;
  delivery_error: string | null;
}

export interface EmailBodiesTable {
  email_id: string;
  /** `$body`: HTML as given, or a TEXT body escaped. */
  html: string;
  /** The plain text of a TEXT body (what is delivered); null for HTML. */
  text: string | null;
}

export interface EmailFilesTable {
  email_id: string;
  file_id: string;
  position: number;
}

export interface EmailDraftsTable {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  to_json: string;
  cc_json: string;
  bcc_json: string;
  subject: string | null;
  body_html: string | null;
  body_text: string | null;
  /** JSON array of file ids. */
  attachments_json: string;
  drafted_at: string;
}

export interface EmailOutboxTable {
  email_id: string;
  workspace_id: string;
  attempts: number;
  /** Due from then on; while claimed, the end of the claim's lease. */
  next_attempt_at: string;
  lease_owner: string | null;
  last_error: string | null;
  created_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    emails: EmailsTable;
    email_bodies: EmailBodiesTable;
    email_files: EmailFilesTable;
    email_drafts: EmailDraftsTable;
    email_outbox: EmailOutboxTable;
  }
}
