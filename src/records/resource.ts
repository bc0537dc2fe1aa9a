// Records as the API shows them (docs/records.md): the record resource shaped from the stored
// values and the type's definitions, every field and relationship present. Reads load the
// definitions once and every relationship of a page in a few batched queries.
import type { RelationshipDef, TypeDefinitions } from '../definitions/service.ts';
import { cachedDefinitions, loadDefinitions } from '../definitions/service.ts';
import type { Ctx } from '../lib/context.ts';
import type { IdKind } from '../lib/ids.ts';
import * as repo from './repository.ts';
import type { RecordKind } from './tables.ts';

// Derived relationships (docs/records.md §Definitions): computed when read by the module that owns
// them, such as `$meeting`. That module registers its resolver when the app is composed; records
// never import it, so the owner may depend on records and not the other way round. Until one is
// registered, a derived relationship is empty.
/** The ids of `key` for each of `ids` (records of `objectType`); a record left out has none. */
export type DerivedResolver = (ctx: Ctx, input: { objectType: string; key: string; ids: readonly string[] }) => Promise<Map<string, string[]>>;

const resolvers = new Map<string, DerivedResolver>();

export function registerDerived(objectType: string, key: string, resolver: DerivedResolver): void {
  resolvers.set(`${objectType}/${key}`, resolver);
}

export async function resolveDerived(ctx: Ctx, objectType: string, key: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const resolver = resolvers.get(`${objectType}/${key}`);
  return resolver ? resolver(ctx, { objectType, key, ids }) : new Map();
}

export interface RecordType {
  /** A system type, or the slug of a custom object type. */
  objectType: string;
  idKind: IdKind;
  /** Path of the routes and of httpLink (`objects/<slug>/values` for a custom type). */
  plural: string;
  /** The article of its name in summaries. */
  article: 'a' | 'an';
  /** Whether lists hold records of the type (docs/lists). */
  listable: boolean;
  /** Whether the type has GET /v1/<plural>/definitions. */
  definitions: boolean;
  /** Whether a create must name relationships (a required one). */
  createNeedsRelationships: boolean;
  /** Update operations: `any` ({add, remove} or {replace}); `addRemove`: {add, remove} only, no replace (notes). */
  updateOperations: 'any' | 'addRemove';
}

const base = { listable: false, definitions: true, createNeedsRelationships: false, updateOperations: 'any' } as const;

export const RECORD_TYPES: Readonly<Record<RecordKind, RecordType & { objectType: RecordKind }>> = {
  account: { ...base, objectType: 'account', idKind: 'acc', plural: 'accounts', article: 'an', listable: true },
  contact: { ...base, objectType: 'contact', idKind: 'con', plural: 'contacts', article: 'a', listable: true },
  opportunity: { ...base, objectType: 'opportunity', idKind: 'opp', plural: 'opportunities', article: 'an', listable: true, createNeedsRelationships: true },
  task: { ...base, objectType: 'task', idKind: 'tsk', plural: 'tasks', article: 'a', createNeedsRelationships: true },
  note: { ...base, objectType: 'note', idKind: 'nte', plural: 'notes', article: 'a', updateOperations: 'addRemove' },
};

/** The engine's view of a custom object type: records with ids `rec_…`, every definition operators added. */
export function customRecordType(slug: string): RecordType {
  return { ...base, objectType: slug, idKind: 'rec', plural: `objects/${slug}/values`, article: 'a' };
}

/** The record type of a stored record's kind. */
export function typeOfKind(kind: string): RecordType {
  return Object.hasOwn(RECORD_TYPES, kind) ? RECORD_TYPES[kind as RecordKind] : customRecordType(kind);
}

export interface RecordResource {
  id: string;
  createdAt: string;
  updatedAt: string | null;
  httpLink: string | null;
  externalId: string | null;
  fields: Record<string, { value: unknown; valueType: string }>;
  relationships: Record<string, { cardinality: 'has_one' | 'has_many'; objectType: string; values: string[] }>;
}

export async function requireDefinitions(ctx: Ctx, objectType: string, version?: number): Promise<TypeDefinitions> {
  const defs = await loadDefinitions(ctx, version === undefined ? { objectType } : { objectType, version });
  if (!defs) throw new Error(`no definitions for ${objectType}`);
  return defs;
}

export function toResource(ctx: Ctx, defs: TypeDefinitions, row: repo.RecordRow, rels: Map<string, string[]> | undefined): RecordResource {
  const stored = JSON.parse(row.fields) as Record<string, unknown>;
  const fields: RecordResource['fields'] = {};
  for (const [key, def] of defs.fields) fields[key] = { value: Object.hasOwn(stored, key) ? stored[key] : null, valueType: def.valueType };
  const relationships: RecordResource['relationships'] = {};
  for (const [key, def] of defs.relationships) relationships[key] = { cardinality: def.cardinality, objectType: def.objectType, values: rels?.get(key) ?? [] };
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    httpLink: ctx.links.http(typeOfKind(row.kind).plural, row.id),
    externalId: row.external_id,
    fields,
    relationships,
  };
}

/** "<source type>/<name>" → key, for the inverse relationships of a type. */
function inversePairs(defs: TypeDefinitions): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const def of defs.relationships.values()) if (def.storage.kind === 'inverse') pairs.set(`${def.storage.objectType}/${def.storage.key}`, def.key);
  return pairs;
}

/** Inverse rows known to come from elsewhere: `otherRelationships` does not read them. */
const NOT_READ: repo.RelationshipValues = new Map();

/** The relationships of a type that are not the records' own rows: inverse and derived ones. */
interface OtherValues {
  inverse: repo.RelationshipValues;
  derived: RelationshipDef[];
  resolved: Map<string, string[]>[];
}

async function otherRelationships(ctx: Ctx, defs: TypeDefinitions, ids: readonly string[], inverseKnown?: repo.RelationshipValues): Promise<OtherValues> {
  const derived = [...defs.relationships.values()].filter((d) => d.storage.kind === 'derived');
  const [inverse, ...resolved] = await Promise.all([
    inverseKnown ?? repo.inverseRelationships(ctx.db, ids, inversePairs(defs)),
    ...derived.map((d) => resolveDerived(ctx, defs.objectType, d.key, ids)),
  ]);
  return { inverse, derived, resolved };
}

function assemble(defs: TypeDefinitions, ids: readonly string[], own: repo.RelationshipValues, others: OtherValues): repo.RelationshipValues {
  const out: repo.RelationshipValues = new Map();
  for (const id of ids) {
    const byKey = new Map<string, string[]>();
    for (const [key, def] of defs.relationships) {
      const values = valuesOf(def, id, own, others);
      if (values.length > 0) byKey.set(key, values);
    }
    out.set(id, byKey);
  }
  return out;
}

/**
 * Every relationship of `ids` (records of defs' type): own rows, inverse rows and derived ones,
 * batched. `known.own`, `known.inverse`: those rows when the caller already knows them (a create
 * wrote them), which are then not read.
 */
export async function relationshipValues(
  ctx: Ctx,
  defs: TypeDefinitions,
  ids: readonly string[],
  known: { own?: repo.RelationshipValues; inverse?: repo.RelationshipValues } = {},
): Promise<repo.RelationshipValues> {
  if (ids.length === 0) return new Map();
  const [own, others] = await Promise.all([known.own ?? repo.ownRelationships(ctx.db, ids), otherRelationships(ctx, defs, ids, known.inverse)]);
  return assemble(defs, ids, own, others);
}

function valuesOf(def: RelationshipDef, id: string, own: repo.RelationshipValues, others: OtherValues): string[] {
  if (def.storage.kind === 'own') return own.get(id)?.get(def.key) ?? [];
  if (def.storage.kind === 'inverse') return others.inverse.get(id)?.get(def.key) ?? [];
  return others.resolved[others.derived.indexOf(def)]?.get(id) ?? [];
}

/** The records of `ids` of this type in ctx's workspace, in the order of `ids` (others are left out). */
export async function loadRecords(ctx: Ctx, input: { kind: string; ids: string[] }): Promise<RecordResource[]> {
  if (input.ids.length === 0) return [];
  // The records, the definitions' version, the records' own relationship rows and the rows pointing
  // at them come from one statement; the derived relationships are read alongside it with the definitions cached from an
  // earlier request, and read again only if the version shows that cache was stale (docs/pages.md
  // §Round trips of a page). Rows of ids not found are read and dropped: never shown.
  const guess = cachedDefinitions(ctx, input.kind);
  const [found, guessed] = await Promise.all([
    repo.recordsWithVersion(ctx.db, ctx.actor.workspaceId, input.kind, input.ids),
    guess ? otherRelationships(ctx, guess, input.ids, NOT_READ) : undefined,
  ]);
  const ids = input.ids.filter((id) => found.rows.has(id));
  if (ids.length === 0) return [];
  const defs = await requireDefinitions(ctx, input.kind, found.defsVersion);
  const inverse = repo.inverseValues(found.inverse, inversePairs(defs));
  const others = guessed && guess === defs ? { ...guessed, inverse } : await otherRelationships(ctx, defs, ids, inverse);
  const rels = assemble(defs, ids, found.own, others);
  return ids.map((id) => toResource(ctx, defs, found.rows.get(id) as repo.RecordRow, rels.get(id)));
}
