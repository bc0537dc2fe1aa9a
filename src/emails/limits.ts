// The limits of an e-mail (docs/emails.md), held by the schemas (src/emails/schemas.ts) and the
// service alike; apart from the schemas, so that the service a command runs never loads TypeBox.
import { PURPOSE_RULES } from '../files/rules.ts';

/** Recipients of one e-mail: to, cc and bcc together (each list alone is held to it by its schema). */
export const MAX_ADDRESSES = 500;
export const MAX_ATTACHMENTS = 5;
/** 20 MiB (20,971,520 bytes): the limit of the email_attachment purpose, whatever a file's purpose. */
export const MAX_ATTACHMENT_BYTES = PURPOSE_RULES.email_attachment.maxBytes;
