// Row types of the tables this module owns. A meeting's description and transcript live apart in
// meeting_contents, which is read only for meetings the caller sees at FULL access.
export type PrivacySetting = 'FULL' | 'METADATA';

export interface MeetingsTable {
  id: string;
  workspace_id: string;
  external_id: string | null;
  title: string;
  /** ISO 8601 UTC with milliseconds. */
  start_date: string;
  end_date: string;
  meeting_url: string | null;
  organizer_email: string | null;
  /** JSON array of addresses as written; null when never given. */
  attendee_emails: string | null;
  privacy_setting: PrivacySetting | null;
  created_at: string;
  updated_at: string;
}

export interface MeetingContentsTable {
  meeting_id: string;
  description: string | null;
  transcript_id: string | null;
}

/** The organizer's and attendees' addresses, folded (src/lib/fold.ts), one row each. */
export interface MeetingParticipantsTable {
  meeting_id: string;
  workspace_id: string;
  email: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    meetings: MeetingsTable;
    meeting_contents: MeetingContentsTable;
    meeting_participants: MeetingParticipantsTable;
  }
}
