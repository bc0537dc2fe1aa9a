// A meeting's derived relationships (docs/meetings.md §Derived relationships), computed when read
// for a whole page: `$contact` the contacts whose `$email` holds the organizer's or an attendee's
// address (ignoring case), `$account` those contacts' accounts, `$opportunity` the opportunities
// whose `$account` is one of them. Each in id order (creation order).
import type { Ctx } from '../lib/context.ts';
import { foldText } from '../lib/fold.ts';
import { contactIdsByEmails } from '../records/repository.ts';
import { accountsOfContacts, type MeetingRow, opportunitiesOfAccounts } from './repository.ts';

export interface Derived {
  contact: string[];
  account: string[];
  opportunity: string[];
}

function addressesOf(r: MeetingRow): string[] {
  const attendees = r.attendee_emails === null ? [] : (JSON.parse(r.attendee_emails) as string[]);
  return [...(r.organizer_email === null ? [] : [r.organizer_email]), ...attendees].map(foldText);
}

const union = (lists: Array<string[] | undefined>) => [...new Set(lists.flatMap((l) => l ?? []))].sort();

export async function relationshipsOf(ctx: Ctx, rows: readonly MeetingRow[]): Promise<Map<string, Derived>> {
  const ws = ctx.actor.workspaceId;
  const addresses = new Map(rows.map((r) => [r.id, addressesOf(r)]));
  const contactsByEmail = await contactIdsByEmails(ctx.db, ws, [...new Set([...addresses.values()].flat())]);
  const contacts = new Map(rows.map((r) => [r.id, union((addresses.get(r.id) ?? []).map((a) => contactsByEmail.get(a)))]));
  const accountsByContact = await accountsOfContacts(ctx.db, union([...contacts.values()]));
  const accounts = new Map(rows.map((r) => [r.id, union((contacts.get(r.id) ?? []).map((c) => accountsByContact.get(c)))]));
  const oppsByAccount = await opportunitiesOfAccounts(ctx.db, ws, union([...accounts.values()]));
  return new Map(
    rows.map((r) => {
      const account = accounts.get(r.id) ?? [];
      return [r.id, { contact: contacts.get(r.id) ?? [], account, opportunity: union(account.map((a) => oppsByAccount.get(a))) }];
    }),
  );
}
