import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { buildDefinitions, type FieldDef, type TypeDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { emailKey } from '../../lib/email.ts';
import { valueRows } from '../../records/index/values.ts';
import { valueTaken, writeValueIndex } from '../../records/index/repository.ts';
import { noteMigration } from '../migration-notes.ts';
import { runBeside } from '../run-beside.ts';

// A domain written with its final dot, the DNS root (`acme.test.`), is the domain without it
// (docs/records.md §Values stored before 0083): an address's key and a website's host leave the
// dot out, so that `ann@acme.test.` and `ann@acme.test` are one value and a meeting's participant
// at `acme.test` finds the account whose website is `https://acme.test./`. The value index held
// them with the dot. Each live record holding such an address in an EMAIL field, or such a
// website in an account's `$website`, has its value index written again (rows, trigram postings);
// records, their values and times do not change, and a record in the trash holds no index rows (a
// restore writes them by the rule). Two records whose addresses of a unique field are only now one
// value both keep them, as after 0078: counted, never refused. A user whose address has the dot
// gets the key without it, unless another user of the workspace holds that key: that one is the
// address's user, this one keeps its row and address without a key (as after 0080), counted; a
// user 0080 gave the key keeps being the address's user over one it left without.
//
// An older release beside it (docs/deploy.md §Migrations) keeps working: a record or user it
// writes meanwhile keeps the key with the dot until its next write here.
const BATCH = 500;
const NAME = '0083_rooted_domains';

interface Counts {
  records: number;
  clashes: number;
  users: number;
  userClashes: number;
}

const endsRooted = (domain: string) => domain.length > 1 && domain.endsWith('.');

/** Whether an address's domain ends with a dot. */
const rootedAddress = (x: unknown): x is string => typeof x === 'string' && x.includes('@') && endsRooted(x.slice(x.lastIndexOf('@') + 1));

/** Whether a website's host, read as the value index reads it, ends with a dot. */
function rootedWebsite(x: unknown): boolean {
  if (typeof x !== 'string') return false;
  for (const candidate of [x, `https://${x}`]) {
    try {
      const u = new URL(candidate);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '') return endsRooted(u.hostname);
    } catch {
      // not a URL this way; try the next
    }
  }
  return false;
}

const each = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

async function migrateType(db: Kysely<any>, workspaceId: string, defs: TypeDefinitions, emails: readonly FieldDef[], counts: Counts): Promise<void> {
  const website = defs.objectType === 'account' && defs.fields.has('$website');
  const unique: Array<{ id: string; field: string; key: string }> = [];
  for (let after = { created_at: '', id: '' }; ;) {
    // Paged along the records' listing index (workspace, type, createdAt, id), as in 0078.
    const rows: { id: string; created_at: string; fields: string }[] = await db
      .selectFrom('records')
      .select(['id', 'created_at', 'fields'])
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', defs.objectType)
      .where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)))
      .orderBy('created_at')
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    after = rows.at(-1)!;
    const rewrite = rows.flatMap((r) => {
      // Only a text that names a dot can hold one: most records are passed over unparsed.
      if (!r.fields.includes('.')) return [];
      const values = JSON.parse(r.fields) as Record<string, unknown>;
      const addresses = emails.flatMap((field) =>
        each(values[field.key])
          .filter(rootedAddress)
          .map((address) => ({ field, address })),
      );
      for (const a of addresses) if (a.field.unique) unique.push({ id: r.id, field: a.field.key, key: emailKey(a.address) });
      const sites = website && each(values.$website).some(rootedWebsite);
      return addresses.length > 0 || sites ? [{ id: r.id, values }] : [];
    });
    if (rewrite.length === 0) continue;
    // The migrator's transaction carries none of write()'s state (src/db/write.ts), as in 0056.
    await writeValueIndex(
      db as unknown as Tx,
      defs,
      rewrite.map((r) => r.id),
      rewrite.flatMap((r) => valueRows(workspaceId, defs, r.id, r.values)),
    );
    counts.records += rewrite.length;
  }
  // Once every record of the type has its rows: a value another record holds now is a clash.
  for (const u of unique) if (await valueTaken(db, workspaceId, defs.objectType, u.field, { text: u.key }, u.id)) counts.clashes++;
}

async function migrateUsers(db: Kysely<any>, counts: Counts): Promise<void> {
  const rows: { id: string; workspace_id: string; email: string; email_key: string | null }[] = await db
    .selectFrom('users')
    .select(['id', 'workspace_id', 'email', 'email_key'])
    .where('email', 'like', '%.')
    .orderBy('id')
    .execute();
  // The users holding a key come first: of two spellings of one address, the one that is the
  // address's user (as 0080 chose it) stays so, and the one without a key stays without.
  const holdersFirst = rows.filter((u) => u.email_key !== null).concat(rows.filter((u) => u.email_key === null));
  for (const r of holdersFirst.filter((u) => rootedAddress(u.email))) {
    const key = emailKey(r.email);
    const holder = await db
      .selectFrom('users')
      .select('id')
      .where('workspace_id', '=', r.workspace_id)
      .where('email_key', '=', key)
      .where('id', '!=', r.id)
      .executeTakeFirst();
    await db
      .updateTable('users')
      .set({ email_key: holder ? null : key })
      .where('id', '=', r.id)
      .execute();
    counts.users++;
    if (holder) counts.userClashes++;
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await runBeside(db, NAME);
  const counts: Counts = { records: 0, clashes: 0, users: 0, userClashes: 0 };
  const workspaces: { id: string }[] = await db.selectFrom('workspaces').select('id').orderBy('id').execute();
  for (const { id } of workspaces) {
    // The types that can hold addresses or websites: the system types, and every type with a custom EMAIL field.
    const custom: { object_type: string }[] = await db
      .selectFrom('field_definitions')
      .select('object_type')
      .distinct()
      .where('workspace_id', '=', id)
      .where('value_type', '=', 'EMAIL')
      .execute();
    const types = [...new Set([...Object.keys(SYSTEM_CATALOGUES), ...custom.map((r) => r.object_type)])].sort();
    const ctx = operatorCtx(db, id);
    for (const objectType of types) {
      // Built as stored, outside the cache, as migration 0056 builds them. Archived fields have no
      // index rows (docs/records.md §Value index).
      const defs = await buildDefinitions(ctx, objectType);
      if (!defs) continue;
      const emails = [...defs.fields.values()].filter((f) => f.valueType === 'EMAIL');
      if (emails.length > 0 || objectType === 'account') await migrateType(db, id, defs, emails, counts);
    }
  }
  await migrateUsers(db, counts);
  if (counts.records > 0 || counts.users > 0)
    noteMigration({
      migration: NAME,
      message: `wrote the value index of ${counts.records} records and the key of ${counts.users} users holding a domain written with its final dot; ${counts.clashes} addresses of unique fields and ${counts.userClashes} users' addresses are held by another in the form without it, and both kept`,
      counts: { ...counts },
    });
}
