// The import kind of records of custom object types (docs/import.md §record). Its lines name the
// type as `"object": "record", "objectType": slug` or as `"object": slug`; every type they name is
// checked before the first write (`unknownScopes`), so that a line naming no type writes nothing,
// batched too.
import { findObjectType, RESERVED_TYPES } from '../definitions/object-types.ts';
import { CUSTOM_KEY } from '../definitions/service.ts';
import type { DefinitionInput } from '../definitions/import.ts';
import { ImportError, type ImportItem, type ImportKind } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { check, finishKind, MEMBERS, upsertOfType } from './import.ts';
import { recheckUniqueValues } from './import-unique.ts';
import { definitionsOf, link, type RecordInput } from './import-links.ts';
import { lookUpExisting } from './import-existing.ts';
import { recordReferences } from './import-references.ts';
import * as repo from './repository.ts';
import { customRecordType } from './resource.ts';

export interface CustomRecordInput extends RecordInput {
  objectType: string;
  /** The member that names the type on the line, for its errors. */
  typeMember: 'object' | 'objectType';
}

function byType(items: ImportItem<CustomRecordInput>[]): Map<string, ImportItem<CustomRecordInput>[]> {
  const groups = new Map<string, ImportItem<CustomRecordInput>[]>();
  for (const item of items) {
    const group = groups.get(item.value.objectType);
    if (group === undefined) groups.set(item.value.objectType, [item]);
    else group.push(item);
  }
  return groups;
}

const CUSTOM_MEMBERS = [...MEMBERS, 'objectType'];

/**
 * Records of custom object types: the type's definitions must exist (in the workspace or as
 * `definition` lines of the same file). Their externalIds are unique per type, and other records
 * reference them under the type's slug.
 */
export const customRecordKind: ImportKind<CustomRecordInput> = {
  object: 'record',
  // `covers` gives it the lines whose object is a slug.
  check(raw) {
    if (raw.object !== 'record') return { objectType: raw.object as string, typeMember: 'object', ...check(raw.object as string, raw, MEMBERS) };
    const objectType = raw.objectType;
    if (typeof objectType !== 'string' || !CUSTOM_KEY.test(objectType)) throw new InputError('must be the slug of a custom object type', 'objectType');
    if (RESERVED_TYPES.has(objectType)) throw new InputError(`"${objectType}" is not a custom object type`, 'objectType');
    return { objectType, typeMember: 'objectType', ...check(objectType, raw, CUSTOM_MEMBERS) };
  },
  scope: (value) => value.objectType,
  covers: (object) => !RESERVED_TYPES.has(object) && CUSTOM_KEY.test(object),
  async unknownScopes(ctx, scopes) {
    const known = new Set<string>();
    for (const slug of scopes) if (await findObjectType(ctx, slug)) known.add(slug);
    for await (const item of ctx.items?.('definition') ?? []) {
      const v = item.value as DefinitionInput;
      if (v.definition === 'type') known.add(v.type.slug);
    }
    return new Set(scopes.filter((s) => !known.has(s)));
  },
  unknownScope: ({ line, value: { objectType, typeMember } }) =>
    new ImportError(
      line,
      typeMember,
      typeMember === 'object'
        ? `"${objectType}" is neither a kind of object nor a custom object type of this import or the workspace`
        : `no custom object type "${objectType}" in this import or the workspace`,
    ),
  lookup: (ctx, externalIds, object) =>
    object === undefined ? Promise.resolve(new Map()) : repo.recordsByExternalId(ctx.db, ctx.actor.workspaceId, object, externalIds),
  references: (ctx, item) => recordReferences(ctx, item.value.objectType, item),
  async ahead(ctx, items) {
    if (!ctx.bulkLoad) for (const objectType of byType(items).keys()) await lookUpExisting(ctx, 'record', objectType);
  },
  async upsert(ctx, items) {
    for (const [objectType, group] of byType(items)) {
      const defs = await definitionsOf(ctx, objectType);
      const first = group[0] as ImportItem<CustomRecordInput>;
      if (!defs) throw new ImportError(first.line, first.value.typeMember, `no custom object type "${objectType}" in the workspace`);
      await upsertOfType(ctx, 'record', customRecordType(objectType), defs, group);
    }
  },
  finish: (ctx) => finishKind(ctx, 'record'),
  underLocks: (ctx) => recheckUniqueValues(ctx, (type) => !RESERVED_TYPES.has(type)),
  async link(ctx, items) {
    for (const [objectType, group] of byType(items)) await link(objectType, ctx, group);
  },
};
