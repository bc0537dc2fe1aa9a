// Import kinds for accounts, contacts and opportunities (docs/design.md §Import format). Rows are
// written in multi-row batches (one upsert per chunk) so that 100,000 records load in seconds;
// references are resolved by externalId in the link phase, after every kind has its ids.
import { type ImportContext, type ImportItem, type ImportKind, onlyFields, upsertByExternalId } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { CUSTOM_SLUG, RECORD_DEFS, type RecordDef } from './definitions.ts';
import * as repo from './repository.ts';
import type { RecordKind } from './tables.ts';
import { checkValue, isValueType } from './values.ts';

export interface RecordInput {
  fields: Record<string, { value: unknown; valueType: string }>;
  /** relationship name → externalIds of the targets */
  relationships: Record<string, string[]>;
}

function object(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError('must be an object', field);
  return v as Record<string, unknown>;
}

function checkFields(def: RecordDef, raw: unknown): RecordInput['fields'] {
  const out: RecordInput['fields'] = {};
  for (const [name, entry] of Object.entries(object(raw ?? {}, 'fields'))) {
    const at = `fields.${name}`;
    if (name.startsWith('$')) {
      if (!Object.hasOwn(def.systemFields, name)) throw new InputError(`is not a system field of ${def.kind} (custom attributes use a bare slug)`, at);
    } else if (!CUSTOM_SLUG.test(name)) {
      throw new InputError('custom attribute names are slugs: a lower-case letter, then letters, digits or _ (at most 63)', at);
    }
    const e = object(entry, at);
    for (const k of Object.keys(e))
      if (k !== 'value' && k !== 'valueType') throw new InputError('is not a known member (use value and valueType)', `${at}.${k}`);
    const type = e.valueType;
    if (!isValueType(type))
      throw new InputError(
        'must be one of ADDRESS, CHECKBOX, CURRENCY, DATETIME, EMAIL, FULL_NAME, MARKDOWN, MULTI_SELECT, NUMBER, SINGLE_SELECT, SOCIAL_HANDLE, TELEPHONE, TEXT, URL',
        `${at}.valueType`,
      );
    // Own keys only: an attribute named like an Object.prototype member must not find it.
    const fixed = Object.hasOwn(def.systemFields, name) ? def.systemFields[name] : undefined;
    if (fixed && type !== fixed) throw new InputError(`must be ${fixed} for ${name}`, `${at}.valueType`);
    if (!('value' in e)) throw new InputError('is required (null when unset)', `${at}.value`);
    try {
      out[name] = { value: checkValue(type, e.value), valueType: type };
    } catch (err) {
      if (err instanceof InputError) throw new InputError(`${err.message} (${type})`, `${at}.value${err.param ?? ''}`);
      throw err;
    }
  }
  return out;
}

function checkRelationships(def: RecordDef, raw: unknown): RecordInput['relationships'] {
  const out: RecordInput['relationships'] = {};
  for (const [name, entry] of Object.entries(object(raw ?? {}, 'relationships'))) {
    const at = `relationships.${name}`;
    const rel = Object.hasOwn(def.relationships, name) ? def.relationships[name] : undefined;
    if (!rel) throw new InputError(`is not a relationship of ${def.kind}; known: ${Object.keys(def.relationships).join(', ')}`, at);
    const e = object(entry, at);
    for (const k of Object.keys(e)) if (!['objectType', 'values', 'cardinality'].includes(k)) throw new InputError('is not a known member', `${at}.${k}`);
    if (e.objectType !== undefined && e.objectType !== rel.objectType) throw new InputError(`must be "${rel.objectType}"`, `${at}.objectType`);
    if (e.cardinality !== undefined && e.cardinality !== rel.cardinality) throw new InputError(`must be "${rel.cardinality}"`, `${at}.cardinality`);
    const values = e.values;
    if (!Array.isArray(values)) throw new InputError('must be an array of externalIds', `${at}.values`);
    if (rel.cardinality === 'has_one' && values.length > 1) throw new InputError('holds at most one externalId (has_one)', `${at}.values`);
    const seen = new Set<string>();
    values.forEach((v, i) => {
      if (typeof v !== 'string' || v.length < 1 || v.length > 255) throw new InputError('must be an externalId string', `${at}.values[${i}]`);
      if (seen.has(v)) throw new InputError(`"${v}" appears twice`, `${at}.values[${i}]`);
      seen.add(v);
    });
    out[name] = values as string[];
  }
  return out;
}

function recordKind(kind: RecordKind): ImportKind<RecordInput> {
  const def = RECORD_DEFS[kind];
  return {
    object: kind,
    check(raw) {
      onlyFields(raw, ['fields', 'relationships']);
      return { fields: checkFields(def, raw.fields), relationships: checkRelationships(def, raw.relationships) };
    },
    lookup: (ctx, externalIds) => repo.recordsByExternalId(ctx.db, ctx.actor.workspaceId, kind, externalIds),
    async upsert(ctx, items) {
      const at = isoNow(ctx.now);
      const rows: repo.RecordRow[] = [];
      const row = (item: ImportItem<RecordInput>, id: string) => {
        rows.push({
          id,
          workspace_id: ctx.actor.workspaceId,
          kind,
          external_id: item.externalId,
          fields: JSON.stringify(item.value.fields),
          created_at: at,
          updated_at: at,
        });
      };
      await upsertByExternalId(ctx, items, {
        object: kind,
        idKind: def.idKind,
        find: (externalIds) => repo.recordsByExternalId(ctx.db, ctx.actor.workspaceId, kind, externalIds),
        update: (item, _old, id) => row(item, id),
        insert: row,
      });
      // Existing and new rows alike: one multi-row upsert per chunk loads 100,000 records in seconds.
      await repo.upsertRecords(ctx.db, rows);
    },
    link: (ctx, items) => link(def, ctx, items),
  };
}

async function link(def: RecordDef, ctx: ImportContext, items: ImportItem<RecordInput>[]): Promise<void> {
  const cache = new Map<string, string>();
  const rows: repo.RelationshipRow[] = [];
  const sources: string[] = [];
  for (const item of items) {
    const source = await ctx.resolve(def.kind, item.externalId, { line: item.line, field: 'externalId' });
    sources.push(source);
    for (const [name, externalIds] of Object.entries(item.value.relationships)) {
      const objectType = (def.relationships[name] as { objectType: string }).objectType;
      for (let i = 0; i < externalIds.length; i++) {
        const ext = externalIds[i] as string;
        const key = `${objectType}\u0000${ext}`;
        let target = cache.get(key);
        if (target === undefined) {
          target = await ctx.resolve(objectType, ext, { line: item.line, field: `relationships.${name}.values[${i}]` });
          cache.set(key, target);
        }
        rows.push({ source_id: source, name, object_type: objectType, target_id: target, position: i });
      }
    }
  }
  await repo.replaceRelationships(ctx.db, sources, rows);
}

export const accountKind = recordKind('account');
export const contactKind = recordKind('contact');
export const opportunityKind = recordKind('opportunity');
