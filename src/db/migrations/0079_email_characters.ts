import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { buildDefinitions, type FieldDef, type TypeDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { unheldCharacter, withoutInvisible } from '../../lib/email.ts';
import { InputError } from '../../lib/errors.ts';
import { valueRows } from '../../records/index/values.ts';
import { writeValueIndex } from '../../records/index/repository.ts';
import { checkValue } from '../../records/values.ts';
import { noteMigration } from '../migration-notes.ts';

// EMAIL values stored before addresses had to be free of control and invisible characters
// (docs/records.md §Values stored before 0079): such an address stopped the import of an export at
// its line, and was a value apart from the address it reads as for unique checks, filters and the
// meetings and e-mails matched to contacts. Each such value of a live record, or of a record in the
// trash, is rewritten without its invisible characters (format characters such as the zero-width
// space, the bidi marks and the BOM, which show as nothing) when what remains is an address a write
// takes, as 0074 rewrites a URL into the form a write stores; a live record's value index is written
// again with it. An address holding a control character, which may stand for anything, or that is
// no address without its invisible characters, stays exactly as it was and is counted. createdAt
// and updatedAt do not change. Records are read 500 at a time in creation order, as in 0074 and
// 0078.
const BATCH = 500;
const NAME = '0079_email_characters';

interface Counts {
  changed: number;
  kept: number;
  records: number;
  trashed: number;
}

/** The address as a write takes it now, or null when no rule gives one. */
function repaired(v: string): string | null {
  const visible = withoutInvisible(v);
  if (visible === undefined) return null;
  try {
    return checkValue('EMAIL', visible) as string;
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    return null;
  }
}

/** The stored value of one field in its present form, counting what changed and what had to be kept. */
function normalise(value: unknown, counts: Counts): unknown {
  const one = (v: unknown): unknown => {
    if (typeof v !== 'string' || unheldCharacter(v) === undefined) return v;
    const out = repaired(v);
    if (out === null) counts.kept++;
    else counts.changed++;
    return out ?? v;
  };
  if (!Array.isArray(value)) return one(value);
  // Two values that become one text are one value, in the first place (a write refuses a value twice).
  return [...new Set(value.map(one))];
}

/** The fields' values in their forms; null when none changed. */
function rewritten(defs: readonly FieldDef[], json: string, counts: Counts): Record<string, unknown> | null {
  const values = JSON.parse(json) as Record<string, unknown>;
  let differs = false;
  for (const def of defs) {
    if (!Object.hasOwn(values, def.key) || values[def.key] === null) continue;
    const out = normalise(values[def.key], counts);
    if (JSON.stringify(out) !== JSON.stringify(values[def.key])) [values[def.key], differs] = [out, true];
  }
  return differs ? values : null;
}

async function migrateLive(db: Kysely<any>, workspaceId: string, defs: TypeDefinitions, fields: readonly FieldDef[], counts: Counts): Promise<void> {
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
    if (rows.length === 0) return;
    after = rows.at(-1)!;
    const changed = rows.flatMap((r) => {
      const values = rewritten(fields, r.fields, counts);
      return values ? [{ id: r.id, values }] : [];
    });
    if (changed.length === 0) continue;
    for (const r of changed)
      await db
        .updateTable('records')
        .set({ fields: JSON.stringify(r.values) })
        .where('id', '=', r.id)
        .execute();
    // The migrator's transaction carries none of write()'s state (src/db/write.ts), as in 0056.
    await writeValueIndex(
      db as unknown as Tx,
      defs,
      changed.map((r) => r.id),
      changed.flatMap((r) => valueRows(workspaceId, defs, r.id, r.values)),
    );
    counts.records += changed.length;
  }
}

/** Records in the trash keep their row in the entry's payload; a restore indexes it again (src/trash/restore.ts). */
async function migrateTrash(db: Kysely<any>, workspaceId: string, objectType: string, fields: readonly FieldDef[], counts: Counts): Promise<void> {
  for (let after = { deleted_at: '', id: '' }; ;) {
    // Paged along the trash's index (workspace, deletedAt, id), so that the pages read the
    // workspace's trash once in all: by id alone, SQLite sorted it whole for each page.
    const rows: { id: string; deleted_at: string; payload: string }[] = await db
      .selectFrom('trash')
      .select(['id', 'deleted_at', 'payload'])
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .where((eb) => eb(eb.refTuple('deleted_at', 'id'), '>', eb.tuple(after.deleted_at, after.id)))
      .orderBy('deleted_at')
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return;
    after = rows.at(-1)!;
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as { record?: { fields: string } };
      const values = payload.record ? rewritten(fields, payload.record.fields, counts) : null;
      if (!values || !payload.record) continue;
      payload.record.fields = JSON.stringify(values);
      await db
        .updateTable('trash')
        .set({ payload: JSON.stringify(payload) })
        .where('id', '=', row.id)
        .execute();
      counts.trashed++;
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const counts: Counts = { changed: 0, kept: 0, records: 0, trashed: 0 };
  const workspaces: { id: string }[] = await db.selectFrom('workspaces').select('id').orderBy('id').execute();
  for (const { id } of workspaces) {
    // The types that can hold addresses: the system types, and every type with a custom EMAIL
    // field, archived or not.
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
      // Built as stored, outside the cache, as migration 0056 builds them.
      const defs = await buildDefinitions(ctx, objectType);
      const fields = defs ? [...defs.fields.values(), ...defs.archived.values()].filter((f) => f.valueType === 'EMAIL') : [];
      if (!defs || fields.length === 0) continue;
      await migrateLive(db, id, defs, fields, counts);
      await migrateTrash(db, id, objectType, fields, counts);
    }
  }
  if (counts.changed + counts.kept > 0)
    noteMigration({
      migration: NAME,
      message: `rewrote ${counts.changed} e-mail addresses without their invisible characters in ${counts.records} records and ${counts.trashed} records in the trash; kept ${counts.kept} holding a control character or no address without them as they were`,
      counts: { ...counts },
    });
}
