// Row types of the tables this module owns.
export type Visibility = 'public' | 'restricted' | 'private';

export interface ChannelsTable {
  id: string;
  workspace_id: string;
  external_id: string | null;
  provider: string;
  name: string;
  visibility: Visibility;
  /** Kept in step with messages so that totalCount is a sum over channels, never a scan. */
  message_count: number;
  created_at: string;
  updated_at: string;
}

export interface ChannelMembersTable {
  channel_id: string;
  user_id: string;
  created_at: string;
}

// Adds these tables to the one Database type (src/db/types.ts) that Kysely checks queries against.
declare module '../db/types.ts' {
  interface Database {
    channels: ChannelsTable;
    channel_members: ChannelMembersTable;
  }
}
