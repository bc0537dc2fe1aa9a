import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { buildDefinitions, type FieldDef, type TypeDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { emailKey, emailUnicodeSpelling } from '../../lib/email.ts';
import { foldText } from '../../lib/fold.ts';
import { valueRows } from '../../records/index/values.ts';
import { valueTaken, writeValueIndex } from '../../records/index/repository.ts';
import { noteMigration } from '../migration-notes.ts';
import { runBeside } from '../run-beside.ts';

// E-mail addresses are compared by their key, the domain in ASCII (docs/records.md §Values stored
// before 0078, §E-mail addresses). The value index held an address folded as written: one with a
// Unicode domain was a value apart from its ASCII form, and one with an `xn--` label had no row of
// its Unicode spelling. Each live record of a type with an EMAIL field whose addresses give other
// rows now has its value index written again (rows, trigram postings); records, their values and
// times do not change. A record in the trash holds no index rows: a restore writes them by the rule.
// Two records holding the two forms of one address of a unique field both keep it, as after 0074:
// they are counted, never refused.
//
// An older release beside it (docs/deploy.md §Migrations) keeps working: the index keeps the
// Unicode spelling it compares, and gains the ASCII form a meeting holds. A record it writes
// meanwhile keeps the earlier rows until its next write.
const BATCH = 500;
const NAME = '0078_email_keys';

interface Counts {
  records: number;
  clashes: number;
}

/** Whether an address gives other index rows by the rule than the one folded row it had. */
const changes = (x: unknown): boolean => typeof x === 'string' && (emailKey(x) !== foldText(x) || emailUnicodeSpelling(x) !== undefined);

/** The addresses of `fields` in a record's values whose rows change. */
function changed(fields: readonly FieldDef[], values: Record<string, unknown>): Array<{ field: FieldDef; address: string }> {
  return fields.flatMap((field) => {
    const v = values[field.key];
    return (Array.isArray(v) ? v : [v]).filter(changes).map((address) => ({ field, address: address as string }));
  });
}

async function migrateType(db: Kysely<any>, workspaceId: string, defs: TypeDefinitions, fields: readonly FieldDef[], counts: Counts): Promise<void> {
  const unique: Array<{ id: string; field: string; key: string }> = [];
  for (let after = { created_at: '', id: '' }; ;) {
    // Paged along the records' listing index (workspace, type, createdAt, id), so that a page reads
    // its own rows alone on either database: by id alone, SQLite sorted every record of the type
    // for each page.
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
      const values = JSON.parse(r.fields) as Record<string, unknown>;
      const addresses = changed(fields, values);
      for (const a of addresses) if (a.field.unique) unique.push({ id: r.id, field: a.field.key, key: emailKey(a.address) });
      return addresses.length > 0 ? [{ id: r.id, values }] : [];
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

export async function up(db: Kysely<any>): Promise<void> {
  await runBeside(db, NAME);
  const counts: Counts = { records: 0, clashes: 0 };
  const workspaces: { id: string }[] = await db.selectFrom('workspaces').select('id').orderBy('id').execute();
  for (const { id } of workspaces) {
    // The types that can hold addresses: the system types, and every type with a custom EMAIL field.
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
      const fields = defs ? [...defs.fields.values()].filter((f) => f.valueType === 'EMAIL') : [];
      if (defs && fields.length > 0) await migrateType(db, id, defs, fields, counts);
    }
  }
  if (counts.records > 0)
    noteMigration({
      migration: NAME,
      message: `wrote the value index of ${counts.records} records holding e-mail addresses of internationalized domains; ${counts.clashes} addresses of unique fields are held by another record in another form, and both kept`,
      counts: { ...counts },
    });
}
