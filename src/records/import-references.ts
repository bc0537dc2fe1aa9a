// The references of the record kinds' lines (docs/import.md §Rules): the externalIds of each
// relationship's targets, of the type its definition names, so that the import finds those that
// name nothing before its first write. A relationship is defined in the workspace, or by a
// `definition` line of the same file: that one is known once every line is checked.
import type { DefinitionInput } from '../definitions/import.ts';
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { ImportItem, Reference, ReferenceContext } from '../import/kind.ts';
import { importObject, type RecordInput } from './import-links.ts';

const TARGETS = Symbol('records.references');

interface Target {
  objectType: string;
  storage: { kind: string };
  cardinality: 'has_one' | 'has_many';
}

interface Targets {
  /** The workspace's definitions of each type, read once (null: no such type in the workspace). */
  types: Map<string, TypeDefinitions | null>;
  /** `<type>\t<key>` → each relationship the file's `definition` lines add, stored on `<type>`; read once every line is checked. */
  file?: Map<string, Target>;
}

async function fileRelationships(ctx: ReferenceContext): Promise<Map<string, Target>> {
  const out = new Map<string, Target>();
  for await (const { value } of ctx.items?.('definition') ?? []) {
    const d = value as DefinitionInput;
    if (d.definition !== 'relationship') continue;
    const { objectType, key, targetType, cardinality } = d.relationship;
    out.set(`${objectType}\t${key}`, { objectType: targetType, storage: { kind: 'own' }, cardinality });
  }
  return out;
}

/**
 * The item's references, one for each externalId of its relationships; null while a relationship
 * the workspace does not define may be defined by a line not checked yet. A relationship its write
 * refuses (`linkDef`: defined nowhere, not stored on `type`, another objectType, several values
 * of a has_one) is left out, so that it is refused as such.
 */
export async function recordReferences(ctx: ReferenceContext, type: string, item: ImportItem<RecordInput>): Promise<Reference[] | null> {
  const names = Object.keys(item.value.relationships);
  if (names.length === 0) return [];
  const targets = ctx.kept<Targets>(TARGETS, () => ({ types: new Map() }));
  let defs = targets.types.get(type);
  if (defs === undefined) targets.types.set(type, (defs = await loadDefinitions(ctx, { objectType: type })));
  const refs: Reference[] = [];
  for (const name of names) {
    const { objectType, values } = item.value.relationships[name] as RecordInput['relationships'][string];
    let def: Target | undefined = defs?.relationships.get(name);
    if (def === undefined) {
      if (!ctx.items) return null;
      targets.file ??= await fileRelationships(ctx);
      def = targets.file.get(`${type}\t${name}`);
    }
    if (def === undefined || def.storage.kind !== 'own') continue;
    if ((objectType !== undefined && objectType !== def.objectType) || (def.cardinality === 'has_one' && values.length > 1)) continue;
    const object = importObject(def);
    for (let i = 0; i < values.length; i++) refs.push({ object, externalId: values[i] as string, field: `relationships.${name}.values[${i}]` });
  }
  return refs;
}
