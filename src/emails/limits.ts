// The limits of an e-mail (docs/emails.md), held by the schemas (src/emails/schemas.ts), the
// service and the import (src/emails/import.ts) alike, so that whatever a send stores an export
// writes and the import takes back; apart from the schemas, so that the service a command runs
// never loads TypeBox.
import { PURPOSE_RULES } from '../files/rules.ts';

/** Recipients of one e-mail: to, cc and bcc together (each list alone is held to it by its schema). */
export const MAX_ADDRESSES = 500;
export const MAX_ATTACHMENTS = 5;
/** 20 MiB (20,971,520 bytes): the limit of the email_attachment purpose, whatever a file's purpose. */
export const MAX_ATTACHMENT_BYTES = PURPOSE_RULES.email_attachment.maxBytes;
/** 25 MiB (26,214,400 bytes): the attachments of one e-mail together, each counted once. */
export const MAX_ATTACHMENTS_TOTAL_BYTES = 25 * 1024 * 1024;
/** Characters (code points, docs/errors.md §Lengths) of a subject, sent or imported. */
export const MAX_SUBJECT = 10_000;
/** Characters of a body's content, sent (within the request's own limit) or imported. */
export const MAX_BODY = 10_000_000;
