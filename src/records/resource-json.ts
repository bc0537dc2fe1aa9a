// A record resource as JSON text, for the writers that store it rather than return it (an
// import's events, docs/events.md §Shape): the same text as JSON.stringify(toResource(…)), built
// from the stored values directly, without the resource's objects (one per field and
// relationship) or a parse of the row's stored JSON. The parts that depend only on the type's
// definitions (each field's key and valueType, every relationship's key, cardinality and
// objectType) are built once per definitions.
import type { TypeDefinitions } from '../definitions/service.ts';
import type { Ctx } from '../lib/context.ts';
import type { RecordRow } from './repository.ts';
import { typeOfKind } from './resource.ts';

interface Parts {
  /** Per field in display order: its key, `,"<key>":{"value":` (without the comma for the first) and `,"valueType":"…"}`. */
  fields: [key: string, open: string, close: string][];
  /** Per relationship in order: its key and `"<key>":{"cardinality":…,"objectType":…,"values":`. */
  relationships: [key: string, open: string][];
  /** `"relationships":{…}` with every relationship's values empty. */
  emptyRelationships: string;
}

const cache = new WeakMap<TypeDefinitions, Parts>();

function partsOf(defs: TypeDefinitions): Parts {
  let parts = cache.get(defs);
  if (parts !== undefined) return parts;
  const fields: Parts['fields'] = [];
  for (const [key, def] of defs.fields)
    fields.push([key, `${fields.length === 0 ? '' : ','}${JSON.stringify(key)}:{"value":`, `,"valueType":${JSON.stringify(def.valueType)}}`]);
  const relationships: Parts['relationships'] = [];
  for (const [key, def] of defs.relationships)
    relationships.push([
      key,
      `${JSON.stringify(key)}:{"cardinality":${JSON.stringify(def.cardinality)},"objectType":${JSON.stringify(def.objectType)},"values":`,
    ]);
  const emptyRelationships = `"relationships":{${relationships.map(([, open]) => `${open}[]}`).join(',')}}`;
  cache.set(defs, (parts = { fields, relationships, emptyRelationships }));
  return parts;
}

/**
 * JSON.stringify(toResource(ctx, defs, row, rels)), where `stored` is the row's stored values
 * (`row.fields` parsed, or the object it was serialised from).
 */
export function resourceJson(
  ctx: Ctx,
  defs: TypeDefinitions,
  row: RecordRow,
  stored: Readonly<Record<string, unknown>>,
  rels: ReadonlyMap<string, string[]> | undefined,
): string {
  const parts = partsOf(defs);
  let out = `{"id":${JSON.stringify(row.id)},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)},"httpLink":${JSON.stringify(ctx.links.http(typeOfKind(row.kind).plural, row.id))},"externalId":${JSON.stringify(row.external_id)},"fields":{`;
  for (const [key, open, close] of parts.fields) {
    // Absent (or undefined, which `row.fields` cannot hold) is null, as toResource reads it.
    const value = Object.hasOwn(stored, key) ? stored[key] : undefined;
    out += `${open}${value === undefined ? 'null' : JSON.stringify(value)}${close}`;
  }
  out += '},';
  if (rels === undefined || rels.size === 0) return `${out}${parts.emptyRelationships}}`;
  out += '"relationships":{';
  for (let i = 0; i < parts.relationships.length; i++) {
    const [key, open] = parts.relationships[i]!;
    out += `${i === 0 ? '' : ','}${open}${JSON.stringify(rels.get(key) ?? [])}}`;
  }
  return `${out}}}`;
}
