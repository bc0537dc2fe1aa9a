import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import { SYSTEM_CATALOGUES } from '../../definitions/catalogue.ts';
import { buildDefinitions, type FieldDef, type TypeDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { InputError } from '../../lib/errors.ts';
import { valueRows } from '../../records/index/values.ts';
import { writeValueIndex } from '../../records/index/repository.ts';
import { checkValue } from '../../records/values.ts';
import { noteMigration } from '../migration-notes.ts';

// URL and SOCIAL_HANDLE values stored before their present rules (docs/records.md §Values stored
// before 0074): a URL holding white space, a control character or `\`, or written without `//`
// (which the URL parser read past), and a profile URL whose handle is not percent-encoded, would
// stop the import of an export at their line, and the unique checks and filters, which compare the
// present forms, missed them. Each such value of a live record, or of a record in the trash, is
// rewritten as a write stores it now: a URL trimmed, those characters inside percent-encoded as
// UTF-8 (`a b` → `a%20b`, nothing dropped), else as the URL parser read it when it was accepted
// (`https:acme.test` → `https://acme.test/`); a handle as its profile URL. A live record's value
// index is written again with it. A value no rule takes stays exactly as it was and is counted.
// createdAt and updatedAt do not change.
const BATCH = 500;
const NAME = '0074_url_forms';
const FORMS = new Set(['URL', 'SOCIAL_HANDLE']);

interface Counts {
  changed: number;
  kept: number;
  records: number;
  trashed: number;
}

/** `s` with white space, control characters and `\` percent-encoded as UTF-8 bytes. */
const escaped = (s: string) => s.replace(/[\s\p{Cc}\\]/gu, (c) => encodeURIComponent(c));

/** The stored form of a value that the present rules refuse as it is, or null. */
function repaired(def: FieldDef, v: string): string | null {
  if (def.valueType !== 'URL') return null;
  const tries = [escaped(v.trim())];
  // Then as the URL parser reads it, with those characters escaped, else as they were (it drops a
  // line break inside a host name, as it did when the value was accepted).
  for (const text of [tries[0]!, v.trim()]) {
    try {
      const u = new URL(text);
      if (u.protocol === 'http:' || u.protocol === 'https:') tries.push(escaped(u.href));
    } catch {
      // the parser reads no URL: nothing more to try
    }
  }
  for (const t of tries) {
    try {
      return checkValue('URL', t, def) as string;
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
    }
  }
  return null;
}

/** The stored value of one field in its present form, counting what changed and what had to be kept. */
function normalise(def: FieldDef, value: unknown, counts: Counts): unknown {
  const one = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    let out: unknown;
    try {
      out = checkValue(def.valueType, v, def);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      out = repaired(def, v);
    }
    if (out === null) counts.kept++;
    else if (out !== v) counts.changed++;
    return out ?? v;
  };
  if (!Array.isArray(value)) return one(value);
  // Two spellings of one URL become one value; the first place is kept.
  return [...new Set(value.map(one))];
}

/** The fields' values in their forms; null when none changed. */
function rewritten(defs: FieldDef[], json: string, counts: Counts): Record<string, unknown> | null {
  const values = JSON.parse(json) as Record<string, unknown>;
  let differs = false;
  for (const def of defs) {
    if (!Object.hasOwn(values, def.key) || values[def.key] === null) continue;
    const out = normalise(def, values[def.key], counts);
    if (JSON.stringify(out) !== JSON.stringify(values[def.key])) [values[def.key], differs] = [out, true];
  }
  return differs ? values : null;
}

async function migrateLive(db: Kysely<any>, workspaceId: string, defs: TypeDefinitions, fields: FieldDef[], counts: Counts): Promise<void> {
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
    for (const r of changed)
      await db
        .updateTable('records')
        .set({ fields: JSON.stringify(r.values) })
        .where('id', '=', r.id)
        .execute();
    if (changed.length === 0) continue;
    // The migrator's transaction carries none of write()'s state (src/db/write.ts), as in 0056.
    const index = changed.flatMap((r) => valueRows(workspaceId, defs, r.id, r.values));
    await writeValueIndex(
      db as unknown as Tx,
      defs,
      changed.map((r) => r.id),
      index,
    );
    counts.records += changed.length;
  }
}

/** Records in the trash keep their row in the entry's payload; a restore indexes it again (src/trash/restore.ts). */
async function migrateTrash(db: Kysely<any>, workspaceId: string, objectType: string, fields: FieldDef[], counts: Counts): Promise<void> {
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
    // The types that can hold such values: the system types, and every type with a custom URL or
    // SOCIAL_HANDLE field, archived or not.
    const custom: { object_type: string }[] = await db
      .selectFrom('field_definitions')
      .select('object_type')
      .distinct()
      .where('workspace_id', '=', id)
      .where('value_type', 'in', [...FORMS])
      .execute();
    const types = [...new Set([...Object.keys(SYSTEM_CATALOGUES), ...custom.map((r) => r.object_type)])].sort();
    const ctx = operatorCtx(db, id);
    for (const objectType of types) {
      // Built as stored, outside the cache, as migration 0056 builds them.
      const defs = await buildDefinitions(ctx, objectType);
      const fields = defs ? [...defs.fields.values(), ...defs.archived.values()].filter((f) => FORMS.has(f.valueType)) : [];
      if (!defs || fields.length === 0) continue;
      await migrateLive(db, id, defs, fields, counts);
      await migrateTrash(db, id, objectType, fields, counts);
    }
  }
  if (counts.changed + counts.kept > 0)
    noteMigration({
      migration: NAME,
      message: `rewrote ${counts.changed} URL and social handle values in ${counts.records} records and ${counts.trashed} records in the trash; kept ${counts.kept} that no rule takes as they were`,
      counts: { ...counts },
    });
}
