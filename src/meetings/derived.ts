// The derived `$meeting` relationship of accounts, contacts and opportunities (docs/meetings.md
// §Derived relationships), the inverse of a meeting's `$contact`, `$account` and `$opportunity`:
// a contact's meetings are those where one of its `$email` addresses is the organizer or an
// attendee; an account's are its contacts' meetings; an opportunity's are its account's. Computed
// when read, for a whole page of records at once. This file imports nothing of src/records/, so
// the records engine can call it without an import cycle.
import type { Ctx } from '../lib/context.ts';
import { accountsOfOpportunities, contactsOfAccounts, meetingsOfContacts } from './repository.ts';

const TYPES = new Set(['account', 'contact', 'opportunity']);

/** record id → `via` ids, through `links` (record → intermediate ids). */
function through(ids: readonly string[], links: Map<string, string[]>, next: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const id of ids) out.set(id, [...new Set((links.get(id) ?? []).flatMap((x) => next.get(x) ?? []))]);
  return out;
}

/**
 * For each of `ids` (records of `objectType` in the caller's workspace), its meeting ids, newest
 * `$startDate` first. The shape of a derived-relationship resolver of the records engine
 * (`key` is `$meeting`); any other type has no meetings.
 */
export async function meetingIdsFor(ctx: Ctx, input: { objectType: string; key?: string; ids: readonly string[] }): Promise<Map<string, string[]>> {
  const ws = ctx.actor.workspaceId;
  const { objectType, ids } = input;
  if (!TYPES.has(objectType)) return new Map();
  // record → contacts whose addresses count for it.
  let contacts: Map<string, string[]>;
  if (objectType === 'contact') contacts = new Map(ids.map((id) => [id, [id]]));
  else {
    const accounts = objectType === 'account' ? new Map(ids.map((id) => [id, [id]])) : await accountsOfOpportunities(ctx.db, ids);
    const allAccounts = [...new Set([...accounts.values()].flat())];
    contacts = through(ids, accounts, await contactsOfAccounts(ctx.db, ws, allAccounts));
  }
  const allContacts = [...new Set([...contacts.values()].flat())];
  const found = await meetingsOfContacts(ctx.db, ws, allContacts);
  const start = new Map(found.map((f) => [f.meetingId, f.startDate]));
  const byContact = new Map<string, string[]>();
  for (const f of found) byContact.set(f.contactId, [...(byContact.get(f.contactId) ?? []), f.meetingId]);
  const out = through(ids, contacts, byContact);
  const newestFirst = (a: string, b: string) => {
    const sa = start.get(a) as string;
    const sb = start.get(b) as string;
    return sa === sb ? (a < b ? 1 : -1) : sa < sb ? 1 : -1;
  };
  for (const list of out.values()) list.sort(newestFirst);
  return out;
}
