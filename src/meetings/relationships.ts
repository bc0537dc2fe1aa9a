// A meeting's derived relationships (docs/meetings.md §Derived relationships), computed when read
// for a whole page: `$contact` the contacts whose `$email` holds the organizer's or an attendee's
// address (ignoring case), `$account` those contacts' accounts, `$opportunity` the opportunities
// whose `$account` is one of them. Each in id order (creation order).
import type { Ctx } from '../lib/context.ts';
import { emailKey } from '../lib/email.ts';
import { derivedOf, type MeetingRow } from './repository.ts';

export interface Derived {
  contact: string[];
  account: string[];
  opportunity: string[];
}

function addressesOf(r: MeetingRow): string[] {
  const attendees = r.attendee_emails === null ? [] : (JSON.parse(r.attendee_emails) as string[]);
  return [...(r.organizer_email === null ? [] : [r.organizer_email]), ...attendees].map(emailKey);
}

const union = (lists: Array<string[] | undefined>) => [...new Set(lists.flatMap((l) => l ?? []))].sort();

function add(map: Map<string, Set<string>>, key: string, value: string | null): void {
  if (value === null) return;
  const set = map.get(key) ?? new Set<string>();
  set.add(value);
  map.set(key, set);
}

/** For the whole page at once: addresses → contacts → accounts → opportunities. */
export async function relationshipsOf(ctx: Ctx, rows: readonly MeetingRow[]): Promise<Map<string, Derived>> {
  const addresses = new Map(rows.map((r) => [r.id, addressesOf(r)]));
  const all = [...new Set([...addresses.values()].flat())];
  const found = all.length === 0 ? undefined : await derivedOf(ctx.db, ctx.actor.workspaceId, all);
  const contactsByEmail = new Map<string, Set<string>>();
  const accountsByContact = new Map<string, Set<string>>();
  for (const f of found?.contacts ?? []) {
    add(contactsByEmail, f.email, f.contact);
    add(accountsByContact, f.contact, f.account);
  }
  const oppsByAccount = found?.opportunities ?? new Map<string, string[]>();
  const list = (set: Set<string> | undefined) => (set ? [...set] : undefined);
  return new Map(
    rows.map((r) => {
      const contact = union((addresses.get(r.id) ?? []).map((a) => list(contactsByEmail.get(a))));
      const account = union(contact.map((c) => list(accountsByContact.get(c))));
      return [r.id, { contact, account, opportunity: union(account.map((a) => oppsByAccount.get(a))) }];
    }),
  );
}
