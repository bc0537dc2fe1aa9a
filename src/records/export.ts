// `rolodex export` of definitions and records (docs/import.md §Export): each as the line that
// `rolodex import` reads back, paged by keyset (`id > last`) so that memory holds one page. A
// record without an externalId is exported under its server id, and references name their
// targets the same way, so an export imported into an empty workspace links what it linked.
// Links to files are written only when the export writes the files (`FileNames`). An archived
// custom field is written with `archived: true` and the values it keeps as `archivedFields`, so
// that the import brings it back hidden with its values (docs/import.md §Export). What is ordered by
// text (types by slug, definitions by type, links by relationship name) is sorted here by code
// point, not by the database, whose collation may be a language's: an export is the same file on
// both databases.
import { type FieldDef, loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { FileNames } from '../files/export.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPages } from '../lib/paging.ts';
import { chunks } from '../db/index.ts';
import { blank, byKeys } from '../lib/chars.ts';
import type { RecordRow } from './repository.ts';
import type { EntityRelationshipsTable as LinkRow } from './tables.ts';

export type Line = Record<string, unknown>;
const PAGE = 500;

/** Custom object types, fields, relationships, and options added to system select fields. */
export async function* definitionLines(ctx: Ctx): AsyncGenerator<Line> {
  const ws = ctx.actor.workspaceId;
  const db = ctx.db;
  const types = await db.selectFrom('object_types').selectAll().where('workspace_id', '=', ws).execute();
  for (const t of types.sort(
    byKeys(
      (r) => r.created_at,
      (r) => r.slug,
    ),
  ))
    yield { object: 'definition', externalId: `type:${t.slug}`, definition: 'objectType', slug: t.slug, label: t.label };
  const options = (await db.selectFrom('select_options').selectAll().where('workspace_id', '=', ws).execute()).sort(
    byKeys(
      (o) => o.object_type,
      (o) => o.field_key,
      (o) => o.position,
    ),
  );
  const fields = (await db.selectFrom('field_definitions').selectAll().where('workspace_id', '=', ws).execute()).sort(byDefinitionPlace);
  for (const f of fields) {
    const config = JSON.parse(f.config) as {
      currency?: string;
      unique?: boolean;
      multipleValues?: boolean;
      handleService?: string;
      defaultCountry?: string;
      archived?: boolean;
    };
    // An option with a description is written whole, so that the import keeps it (docs/import.md §definition).
    const labels = options
      .filter((o) => o.object_type === f.object_type && o.field_key === f.key)
      .map((o) => (o.description === null ? o.label : { label: o.label, description: o.description }));
    yield {
      object: 'definition',
      externalId: `field:${f.object_type}:${f.key}`,
      definition: 'field',
      objectType: f.object_type,
      key: f.key,
      label: f.label,
      valueType: f.value_type,
      ...(f.description !== null ? { description: f.description } : {}),
      ...(config.currency ? { currency: config.currency } : {}),
      ...(config.unique ? { unique: true } : {}),
      ...(config.multipleValues ? { multipleValues: true } : {}),
      ...(config.handleService ? { handleService: config.handleService } : {}),
      ...(config.defaultCountry ? { defaultCountry: config.defaultCountry } : {}),
      ...(labels.length > 0 ? { options: labels } : {}),
      ...(config.archived ? { archived: true } : {}),
    };
  }
  const rels = (await db.selectFrom('relationship_definitions').selectAll().where('workspace_id', '=', ws).execute()).sort(byDefinitionPlace);
  for (const r of rels)
    yield {
      object: 'definition',
      externalId: `relationship:${r.object_type}:${r.key}`,
      definition: 'relationship',
      objectType: r.object_type,
      key: r.key,
      label: r.label,
      cardinality: r.cardinality.toUpperCase(),
      targetObjectType: r.target_type,
      ...(r.description !== null ? { description: r.description } : {}),
    };
  // Without externalId, the import names the line by what it defines (`option:<type>:<field>:<label>`),
  // alike in every workspace, where an id would differ and a long label would overflow an externalId.
  for (const o of options.filter((x) => x.field_key.startsWith('$')))
    yield {
      object: 'definition',
      definition: 'option',
      objectType: o.object_type,
      field: o.field_key,
      label: o.label,
      ...(o.description !== null ? { description: o.description } : {}),
    };
}

/** The workspace's custom object types' slugs, in creation order. */
export async function customTypes(ctx: Ctx): Promise<string[]> {
  const rows = await ctx.db.selectFrom('object_types').select(['slug', 'created_at']).where('workspace_id', '=', ctx.actor.workspaceId).execute();
  return rows
    .sort(
      byKeys(
        (r) => r.created_at,
        (r) => r.slug,
      ),
    )
    .map((r) => r.slug);
}

/**
 * What `--include-trash` adds (src/trash/export.ts): the relationship rows of these sources that
 * the trash holds, and the names of trashed records. Without it, only the live tables are read.
 */
export interface HeldRows {
  links(sourceIds: readonly string[]): Promise<LinkRow[]>;
  names(ids: readonly string[]): Promise<Map<string, string>>;
  /** The memberships of a live list that the trash holds for its trashed members. */
  members(listId: string): Promise<{ entity_id: string; added_at: string }[]>;
}

/** Server id → the externalId an export names it by, for records and users (and trashed records). */
export async function exportedIds(ctx: Ctx, ids: string[], held?: HeldRows): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks([...new Set(ids)])) {
    for (const r of await ctx.db.selectFrom('records').select(['id', 'external_id']).where('id', 'in', part).execute()) out.set(r.id, r.external_id ?? r.id);
    for (const r of await ctx.db.selectFrom('users').select(['id', 'external_id']).where('id', 'in', part).execute()) out.set(r.id, r.external_id ?? r.id);
  }
  const missing = [...new Set(ids)].filter((id) => !out.has(id));
  if (held && missing.length > 0) for (const [id, name] of await held.names(missing)) out.set(id, name);
  return out;
}

/** A stored value as an import line's value: select option ids become their labels. */
function exportedValue(def: FieldDef, value: unknown): unknown {
  if (!def.options) return value;
  const label = (id: unknown) => def.options?.find((o) => o.id === id)?.label ?? id;
  return Array.isArray(value) ? value.map(label) : label(value);
}

/**
 * An ADDRESS or FULL_NAME none of whose members shows anything, or a required text that shows
 * nothing (white space, invisible characters alone), which a write refuses now (docs/records.md
 * §Writing fields) and an older release stored: it reads as no value, and written out as is, its
 * import would stop at its line. So it is left out, as an unset value is.
 */
function showsNothing(def: FieldDef | undefined, value: unknown): boolean {
  if (typeof value === 'string') return def?.required === true && blank(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((x) => x === null || (typeof x === 'string' && blank(x)));
}

/** The records of one type (a system kind or a custom type's slug), a page at a time; `files`: with their links to files. */
export async function* recordLines(ctx: Ctx, type: string, system: boolean, held?: HeldRows, files?: FileNames): AsyncGenerator<Line> {
  const defs = await loadDefinitions(ctx, { objectType: type });
  if (!defs) return;
  const page = (after: string) =>
    ctx.db
      .selectFrom('records')
      .selectAll()
      .where('workspace_id', '=', ctx.actor.workspaceId)
      .where('kind', '=', type)
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
  for await (const rows of keysetPages(page)) {
    yield* pageLines(ctx, defs, rows, system, held, files);
  }
}

/**
 * The lines of a page of record rows of one type, live or held by the trash: fields as stored
 * (selects as labels), relationships the row is the source of, live and, with `held`, held.
 * Links to files are written with `files` only, naming the files it names.
 */
export async function* pageLines(
  ctx: Ctx,
  defs: TypeDefinitions,
  rows: readonly RecordRow[],
  system: boolean,
  held?: HeldRows,
  files?: FileNames,
): AsyncGenerator<Line> {
  const ids = rows.map((r) => r.id);
  const live = await ctx.db.selectFrom('entity_relationships').selectAll().where('source_id', 'in', ids).execute();
  const links = (held ? [...live, ...(await held.links(ids))] : live).sort(byPlace);
  // Without the files, a link to one is left out (docs/import.md §Export).
  const kept = files ? links : links.filter((l) => !isFileLink(l));
  const names = await exportedIds(
    ctx,
    kept.filter((l) => !isFileLink(l)).map((l) => l.target_id),
    held,
  );
  if (files) for (const [id, name] of await files(kept.filter(isFileLink).map((l) => l.target_id))) names.set(id, name);
  for (const row of rows) {
    const stored = JSON.parse(row.fields) as Record<string, unknown>;
    const fields: Record<string, { value: unknown; valueType: string }> = {};
    const archivedFields: typeof fields = {};
    for (const [key, value] of Object.entries(stored)) {
      const def = defs.fields.get(key);
      if (value === null || showsNothing(def, value)) continue;
      if (def) fields[key] = { value: exportedValue(def, value), valueType: def.valueType };
      const archived = def ? undefined : defs.archived.get(key);
      if (archived) archivedFields[key] = { value: exportedValue(archived, value), valueType: archived.valueType };
    }
    const relationships: Record<string, { objectType: string; values: string[] }> = {};
    for (const l of kept) {
      if (l.source_id !== row.id) continue;
      const target = names.get(l.target_id);
      if (target === undefined) continue;
      (relationships[l.name] ??= { objectType: l.object_type, values: [] }).values.push(target);
    }
    yield {
      object: system ? row.kind : 'record',
      ...(system ? {} : { objectType: row.kind }),
      externalId: row.external_id ?? row.id,
      fields,
      ...(Object.keys(archivedFields).length > 0 ? { archivedFields } : {}),
      relationships,
    };
  }
}

const isFileLink = (l: LinkRow) => l.object_type === 'file';

/** A record's links by relationship name in code point order (so its line's `relationships` too), then place. */
const byPlace = byKeys<LinkRow>(
  (l) => l.source_id,
  (l) => l.name,
  (l) => l.position,
);

/** Definitions by type in code point order, then their place in it. */
const byDefinitionPlace = byKeys<{ object_type: string; position: number; id: string }>(
  (d) => d.object_type,
  (d) => d.position,
  (d) => d.id,
);
