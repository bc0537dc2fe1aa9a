// The rules of docs/design.md §Files that need no database: purposes, filenames, MIME types, and
// how a stored row reads at a given moment (a PENDING session past its deadline reads as EXPIRED).
import type { FileStatus, FilesTable } from './tables.ts';

export const MAX_FILE_BYTES = 512 * 1024 * 1024;
const MB = 1024 * 1024;

export const PURPOSES = ['meeting_transcript', 'knowledge_user', 'knowledge_workspace', 'email_attachment'] as const;
export type Purpose = (typeof PURPOSES)[number];

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const KNOWLEDGE_TYPES = ['application/pdf', 'text/plain', 'text/markdown', 'text/csv', 'text/html', 'application/json', DOCX, XLSX, PPTX];

/** `mimeTypes: null`: any valid MIME type. */
export const PURPOSE_RULES: Record<Purpose, { mimeTypes: readonly string[] | null; maxBytes: number }> = {
  meeting_transcript: { mimeTypes: ['text/plain', 'text/vtt', 'text/markdown', 'application/json', 'application/pdf', DOCX], maxBytes: 50 * MB },
  knowledge_user: { mimeTypes: KNOWLEDGE_TYPES, maxBytes: 100 * MB },
  knowledge_workspace: { mimeTypes: KNOWLEDGE_TYPES, maxBytes: 100 * MB },
  // The attachment limit of e-mails (docs/emails.md), checked again when an e-mail is sent.
  email_attachment: { mimeTypes: null, maxBytes: 20 * MB },
};

/** What a file of this purpose may hold; without one, any valid MIME type up to MAX_FILE_BYTES. */
export function purposeRule(purpose: Purpose | null | undefined): { mimeTypes: readonly string[] | null; maxBytes: number } {
  return purpose ? PURPOSE_RULES[purpose] : { mimeTypes: null, maxBytes: MAX_FILE_BYTES };
}

/**
 * Why a file of this MIME type (its essence) may not have the purpose, or null when it may: the
 * one check of the API's create and of the import (docs/files.md §Purposes), worded for both.
 */
export function mimeTypeRefusal(purpose: Purpose | null | undefined, essence: string): string | null {
  const { mimeTypes } = purposeRule(purpose);
  if (!mimeTypes || mimeTypes.includes(essence)) return null;
  return `"${essence}" is not allowed for purpose ${purpose}; allowed: ${mimeTypes.join(', ')}`;
}

/** `the ceiling of N bytes for purpose P` (`for any file` without one): the size bound of the API's create and of the import, named alike. */
export function ceilingOf(purpose: Purpose | null | undefined): string {
  return `the ceiling of ${purposeRule(purpose).maxBytes} bytes ${purpose ? `for purpose ${purpose}` : 'for any file'}`;
}

// RFC 9110 tokens for type and subtype, then optional `; name=value` parameters. A quoted value
// holds visible ASCII and spaces only: the type is sent back as a Content-Type header (uploadHeaders,
// downloads, S3's signature), and a header cannot carry other characters (docs/files.md §The flow).
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MIME = new RegExp(`^(${TOKEN})/(${TOKEN})(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"[ !#-\\[\\]-~]*"))*$`);

/** `Text/Plain; charset=utf-8` → `text/plain`, or null when not a valid MIME type. */
export function mimeEssence(mimeType: string): string | null {
  const m = MIME.exec(mimeType);
  return m ? `${m[1]}/${m[2]}`.toLowerCase() : null;
}

/**
 * A header value as SigV4 signs it: runs of spaces and tabs made one space, none at either end.
 * The server's upload address compares Content-Type so, as S3 compares it with the one its
 * presigned PUT signed: a type S3 takes, the server takes (docs/files.md §Addresses).
 */
export function signedHeaderValue(value: string): string {
  return value.replace(/[ \t]+/g, ' ').replace(/^ | $/g, '');
}

/**
 * The stored type as a Content-Type header, from the server or from S3 (presigned GET). A create
 * refuses types that are not visible ASCII (docs/files.md §The flow), but rows stored before that
 * rule may hold one; they are served as bytes, never as a failed download.
 */
export function headerSafeType(mimeType: string): string {
  return /^[\t\x20-\x7e]*$/.test(mimeType) ? mimeType : 'application/octet-stream';
}

// C0 and C1 control characters, NUL included. Format characters such as RTL marks are allowed:
// they are stored as given and neutralised where the name is served (Content-Disposition).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function hasControlCharacters(s: string): boolean {
  return CONTROL.test(s);
}

/** How the row reads at `now`: the stored status, or EXPIRED for a PENDING session past its deadline. */
export function effectiveStatus(row: Pick<FilesTable, 'status' | 'expires_at'>, now: number): FileStatus {
  if (row.status === 'PENDING' && row.expires_at !== null && Date.parse(row.expires_at) <= now) return 'EXPIRED';
  return row.status;
}
