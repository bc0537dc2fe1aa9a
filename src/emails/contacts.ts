// The `$contact` relationship of e-mails: the contacts whose `$email` holds any of an e-mail's
// addresses, ignoring case and the form of the domain (docs/records.md §E-mail addresses),
// computed when read (never stored), so a contact's new address counts at once (docs/records.md
// §Value index).
import type { Executor } from '../db/index.ts';
import { emailKey } from '../lib/email.ts';
import { contactIdsByEmails } from '../records/index/repository.ts';

/** The contact ids of each e-mail, given its addresses, sorted; one query for all of them. */
export async function contactsOf(db: Executor, workspaceId: string, addressesByEmail: string[][]): Promise<string[][]> {
  const all = [...new Set(addressesByEmail.flat().map(emailKey))];
  if (all.length === 0) return addressesByEmail.map(() => []);
  const byAddress = await contactIdsByEmails(db, workspaceId, all);
  return addressesByEmail.map((addresses) => [...new Set(addresses.flatMap((a) => byAddress.get(emailKey(a)) ?? []))].sort());
}
