import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import type { FieldDef, TypeDefinitions } from '../../definitions/service.ts';
import { buildDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { InputError } from '../../lib/errors.ts';
import { valueRows } from '../../records/index/values.ts';
import { writeValueIndex } from '../../records/index/repository.ts';
import { checkValue } from '../../records/values.ts';
import { noteMigration } from '../migration-notes.ts';

// TELEPHONE and SOCIAL_HANDLE values stored before their forms (docs/records.md §Values stored
// before 0056): each is rewritten as a write would store it now, E.164 or the profile URL, and the
// record's value index with it. A value that cannot be normalised stays exactly as it was and is
// counted; nothing is dropped. createdAt and updatedAt do not change.
const BATCH = 500;
const NAME = '0056_value_forms';

interface Counts {
  changed: number;
  kept: number;
  records: number;
}

/** The stored value of one field in its form, counting what changed and what had to be kept. */
function normalise(def: FieldDef, value: unknown, counts: Counts): unknown {
  const one = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    try {
      const out = checkValue(def.valueType, v, def);
      if (out !== v) counts.changed++;
      return out;
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      counts.kept++;
      return v;
    }
  };
  if (!Array.isArray(value)) return one(value);
  // Two spellings of one number become one value; the first place is kept.
  return [...new Set(value.map(one))];
}

async function migrateType(db: Kysely<any>, workspaceId: string, defs: TypeDefinitions, counts: Counts): Promise<void> {
  const fields = [...defs.fields.values()].filter((f) => f.valueType === 'TELEPHONE' || f.valueType === 'SOCIAL_HANDLE');
  if (fields.length === 0) return;
  let after = { created_at: '', id: '' };
  for (;;) {
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
    const changed: { id: string; values: Record<string, unknown> }[] = [];
    for (const row of rows) {
      const values = JSON.parse(row.fields) as Record<string, unknown>;
      let differs = false;
      for (const def of fields) {
        if (!Object.hasOwn(values, def.key) || values[def.key] === null) continue;
        const out = normalise(def, values[def.key], counts);
        if (JSON.stringify(out) !== JSON.stringify(values[def.key])) [values[def.key], differs] = [out, true];
      }
      if (differs) changed.push({ id: row.id, values });
    }
    for (const r of changed)
      await db
        .updateTable('records')
        .set({ fields: JSON.stringify(r.values) })
        .where('id', '=', r.id)
        .execute();
    if (changed.length > 0) {
      const index = changed.flatMap((r) => valueRows(workspaceId, defs, r.id, r.values));
      // The migrator's transaction carries none of write()'s state (src/db/write.ts); the layer
      // refuses to read it there, as for any transaction write() did not open.
      await writeValueIndex(
        db as unknown as Tx,
        defs,
        changed.map((r) => r.id),
        index,
      );
    }
    counts.records += changed.length;
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const counts: Counts = { changed: 0, kept: 0, records: 0 };
  const workspaces: { id: string }[] = await db.selectFrom('workspaces').select('id').orderBy('id').execute();
  for (const { id } of workspaces) {
    // The types that can hold such values: accounts (their system handles) and every type with a
    // custom TELEPHONE or SOCIAL_HANDLE field.
    const custom: { object_type: string }[] = await db
      .selectFrom('field_definitions')
      .select('object_type')
      .distinct()
      .where('workspace_id', '=', id)
      .where('value_type', 'in', ['TELEPHONE', 'SOCIAL_HANDLE'])
      .execute();
    const types = [...new Set(['account', ...custom.map((r) => r.object_type)])].sort();
    const ctx = operatorCtx(db, id);
    for (const objectType of types) {
      // Built as stored, outside the cache: its version table may be created in this same run.
      const defs = await buildDefinitions(ctx, objectType);
      if (defs) await migrateType(db, id, defs, counts);
    }
  }
  if (counts.changed + counts.kept > 0)
    noteMigration({
      migration: NAME,
      message: `normalised ${counts.changed} telephone and social handle values in ${counts.records} records; kept ${counts.kept} that could not be normalised as they were`,
      counts: { ...counts },
    });
}
