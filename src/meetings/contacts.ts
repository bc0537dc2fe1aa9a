// `autoCreateRecords` (docs/meetings.md §Records created for attendees): inside the create
// transaction, each organizer or attendee address that matches no member and no contact becomes
// a contact (`$email` = [address]) linked to every account whose `$website` host is the
// address's domain; a domain no account has, unless a public mail provider's, first becomes an
// account of its own (`$name` the domain, `$website` its https address), one per domain, which the
// new contacts of that domain are linked to. Written as every writer of records writes
// (docs/records.md): the row in the stored format, its value-index rows and trigrams, its place in
// the ranked listing, its relationship rows.
import { appendEvents, recordCreatedMany } from '../changes/service.ts';
import { insertRows, lockPartition, rankInsert } from '../db/index.ts';
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { emailKey } from '../lib/email.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { loadRecords } from '../records/service.ts';
import { valueRows } from '../records/index/values.ts';
import { accountsByHosts, contactIdsByEmails, writeValueIndex } from '../records/index/repository.ts';
import { existingRecords, RECORDS, replaceRelationships, touchRecords } from '../records/repository.ts';
import { isMailProvider } from './mail-providers.ts';
import { memberEmails } from './repository.ts';

/** The domain of an address, folded: what follows its last `@`. */
function domainOf(folded: string): string {
  return folded.slice(folded.lastIndexOf('@') + 1);
}

async function definitions(ctx: Ctx, objectType: string): Promise<TypeDefinitions> {
  const defs = await loadDefinitions(ctx, { objectType });
  if (!defs) throw new Error(`the ${objectType} definitions are missing`);
  return defs;
}

/**
 * Inserts new records of one kind (their rows, value index and ranked places) in multi-row
 * statements, whatever their number; returns their ids.
 */
async function insertRecords(ctx: WriteCtx, kind: 'contact' | 'account', all: ReadonlyArray<Record<string, unknown>>): Promise<string[]> {
  if (all.length === 0) return [];
  const ws = ctx.actor.workspaceId;
  const defs = await definitions(ctx, kind);
  const at = isoNow(ctx.now);
  await lockPartition(ctx.db, RECORDS, [ws, kind]);
  const rows = all.map((values) => ({
    id: newId(kind === 'contact' ? 'con' : 'acc', ctx.now),
    workspace_id: ws,
    kind,
    external_id: null,
    fields: JSON.stringify(values),
    created_at: at,
    updated_at: at,
  }));
  // 7 values a row.
  await insertRows(ctx.db, 'records', ['id', 'workspace_id', 'kind', 'external_id', 'fields', 'created_at', 'updated_at'], rows, 1000);
  await writeValueIndex(
    ctx.db,
    defs,
    [],
    rows.flatMap((r, i) => valueRows(ws, defs, r.id, all[i] as Record<string, unknown>)),
  );
  const ids = rows.map((r) => r.id);
  await rankInsert(
    ctx.db,
    RECORDS,
    [ws, kind],
    ids.map((id) => ({ ts: at, id })),
  );
  return ids;
}

/**
 * The accounts of each domain that are still live, read locked against deletion (PostgreSQL), as a
 * write's links are (docs/trash.md): a delete that committed meanwhile has its account left out,
 * and one that comes later waits for this create, then takes the new links into its trash entry.
 * Read after the accounts' listing is taken for the new ones, the order in which a delete takes the
 * listing and then the row (docs/design.md §Database, "The order of locks").
 */
async function liveAccounts(ctx: WriteCtx, byDomain: Map<string, string[]>): Promise<Map<string, string[]>> {
  const live = await existingRecords(ctx.db, ctx.actor.workspaceId, 'account', [...new Set([...byDomain.values()].flat())]);
  return new Map([...byDomain].map(([domain, ids]) => [domain, ids.filter((id) => live.has(id))]));
}

/** Creates the missing contacts for `addresses` (as written), and the accounts of their unknown domains; returns the contacts' ids. */
export async function createMissingContacts(ctx: WriteCtx, addresses: readonly string[]): Promise<string[]> {
  const ws = ctx.actor.workspaceId;
  const byFolded = new Map<string, string>();
  for (const a of addresses) if (!byFolded.has(emailKey(a))) byFolded.set(emailKey(a), a);
  const folded = [...byFolded.keys()];
  if (folded.length === 0) return [];
  const members = await memberEmails(ctx.db, ws, folded);
  const known = await contactIdsByEmails(ctx.db, ws, folded);
  const missing = folded.filter((e) => !members.has(e) && !known.has(e));
  if (missing.length === 0) return [];
  const found = await accountsByHosts(ctx.db, ws, missing.map(domainOf));
  const newDomains = [...new Set(missing.map(domainOf))].filter((d) => !found.has(d) && !isMailProvider(d));
  const made = await insertRecords(
    ctx,
    'account',
    newDomains.map((d) => ({ $name: d, $website: [`https://${d}`] })),
  );
  const accounts = await liveAccounts(ctx, found);
  newDomains.forEach((d, i) => accounts.set(d, [made[i] as string]));
  const ids = await insertRecords(
    ctx,
    'contact',
    missing.map((email) => ({ $email: [byFolded.get(email) as string] })),
  );
  const links = missing.flatMap((email, i) =>
    (accounts.get(domainOf(email)) ?? []).map((target_id, position) => ({
      source_id: ids[i] as string,
      name: '$account',
      object_type: 'account',
      target_id,
      position,
    })),
  );
  await replaceRelationships(ctx.db, ids, links);
  const touched = new Set(links.map((l) => l.target_id));
  // A new account–contact link moves both records' updatedAt (docs/records.md).
  if (touched.size > 0) await touchRecords(ctx.db, [...touched], isoNow(ctx.now));
  // The change log, as for accounts and contacts created through the API (docs/events.md,
  // docs/history.md §Storage): each new record's starting snapshot and its created event.
  await logCreated(ctx, 'account', made);
  await logCreated(ctx, 'contact', ids);
  return ids;
}

/** The starting snapshot and the `<kind>.created` event of each new record, as they read now, in multi-row statements. */
async function logCreated(ctx: WriteCtx, kind: 'contact' | 'account', ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const entities = await loadRecords(ctx, { kind, ids: [...ids] });
  await recordCreatedMany(
    ctx,
    entities.map((entity) => ({
      recordId: entity.id,
      json: JSON.stringify(Object.fromEntries(Object.entries(entity.fields).flatMap(([k, f]) => (f.value === null ? [] : [[k, f.value]])))),
    })),
  );
  await appendEvents(
    ctx,
    entities.map((entity) => ({ type: `${kind}.created` as const, object: entity })),
  );
}
