// The registry of import kinds: every kind `rolodex import` knows, in the order their rows are
// written (referenced kinds first). A kind lives with its resource (`<resource>/import.ts`) and
// is listed here; it never imports this file.
import type { BlobStore } from '../blobs/blob-store.ts';
import { channelKind } from '../channels/import.ts';
import { definitionKind } from '../definitions/import.ts';
import { emailKind } from '../emails/import.ts';
import { fileKind } from '../files/import.ts';
import type { ImportKind } from '../import/kind.ts';
import { listKind } from '../lists/import.ts';
import { mailboxKind } from '../mailboxes/import.ts';
import { meetingKind } from '../meetings/import.ts';
import { messageKind } from '../messages/import.ts';
import { accountKind, contactKind, noteKind, opportunityKind, taskKind } from '../records/import.ts';
import { customRecordKind } from '../records/import-custom.ts';
import { userKind } from '../users/import.ts';
import { workspaceKind } from '../workspaces/import.ts';

/**
 * `blobs`: where imported files' bytes go; without it an import holding files is refused.
 * `downloadTtlSeconds`: DOWNLOAD_TTL_SECONDS, how long bytes a re-import replaced stay on S3
 * (src/files/import.ts).
 */
export function importKinds(deps: { blobs?: BlobStore; downloadTtlSeconds?: number } = {}): ImportKind<any>[] {
  return [
    // The workspace's settings first: the definitions carry its default country (docs/import.md §`workspace`).
    workspaceKind,
    definitionKind,
    userKind,
    channelKind,
    fileKind(deps.blobs, deps.downloadTtlSeconds),
    mailboxKind,
    accountKind,
    contactKind,
    opportunityKind,
    noteKind,
    taskKind,
    customRecordKind,
    listKind,
    meetingKind,
    messageKind,
    emailKind,
  ];
}
