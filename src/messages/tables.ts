// Tables owned by channels and messages. Message text lives in its own table so that the
// visibility walk never touches it and a METADATA row is never even read with its text.
export type Visibility = 'public' | 'restricted' | 'private';
export type TextType = 'TEXT' | 'HTML';

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

export interface MessagesTables {
  channels: ChannelsTable;
  channel_members: ChannelMembersTable;
  messages: MessagesTable;
  message_texts: MessageTextsTable;
  message_files: MessageFilesTable;
}
