// The `$contact` relationship of e-mails: the contacts whose `$email` holds, ignoring case, any of
// an e-mail's addresses, computed when read (never stored), so a contact's new address counts at
// once (docs/records.md §Value index).
import type { Executor } from '../db/index.ts';
import { foldText } from '../lib/fold.ts';
import { contactIdsByEmails } from '../records/index/repository.ts';

/** The contact ids of each e-mail, given its addresses, sorted; one query for all of them. */
export async function contactsOf(db: Executor, workspaceId: string, addressesByEmail: string[][]): Promise<string[][]> {
  const all = [...new Set(addressesByEmail.flat().map(foldText))];
  if (all.length === 0) return addressesByEmail.map(() => []);
  const byAddress = await contactIdsByEmails(db, workspaceId, all);
  return addressesByEmail.map((addresses) => [...new Set(addresses.flatMap((a) => byAddress.get(foldText(a)) ?? []))].sort());
}
