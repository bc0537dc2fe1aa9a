// Request and response shapes of the record API (docs/records.md), made from the system
// catalogue: each system field and relationship is typed by its definition; custom ones (bare
// slugs) take the general shapes. Write values are checked by the service against the
// workspace's definitions (the order of checks is part of the contract), so a write body types
// only its frame. Also: the query string of a filtered listing (docs/filtering.md) and field
// value history (docs/history.md).
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { SYSTEM_CATALOGUES, type SystemCatalogue, type SystemField } from '../definitions/catalogue.ts';
import { Envelope, PageQuery } from '../lib/paging-schemas.ts';
import { FieldValue, Fields, Relationship, Relationships, VALUE_TYPES, type ValueType } from '../lib/resource-schemas.ts';
import { MAX_FILTERS, MAX_VALUE_LENGTH } from './filter/parse.ts';
import type { RecordType } from './resource.ts';
import { valueFormatsText } from './value-formats.ts';

const nullable = (t: TSchema) => Type.Union([t, Type.Null()]);

const Address = Type.Object(
  {
    street: Type.Optional(Type.String()),
    street2: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    postalCode: Type.Optional(Type.String()),
    country: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2' })),
    latitude: Type.Optional(Type.Number()),
    longitude: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);
const FullName = Type.Object({ firstName: Type.Optional(Type.String()), lastName: Type.Optional(Type.String()) }, { additionalProperties: false });

function valueSchema(type: ValueType, multiple: boolean): TSchema {
  if (multiple || type === 'MULTI_SELECT') return Type.Array(Type.String());
  switch (type) {
    case 'NUMBER':
    case 'CURRENCY':
      return Type.Number();
    case 'CHECKBOX':
      return Type.Boolean();
    case 'ADDRESS':
      return Address;
    case 'FULL_NAME':
      return FullName;
    default:
      return Type.String();
  }
}

function fieldSchema(f: SystemField): TSchema {
  const value = f.values ? Type.Union(f.values.map((v) => Type.Literal(v))) : valueSchema(f.valueType, f.multipleValues ?? false);
  return Type.Object({ value: nullable(value), valueType: Type.Literal(f.valueType) }, { additionalProperties: false, description: f.label });
}

/** The record resource of one type: its system fields and relationships always present. */
export function RecordSchema(type: RecordType) {
  const catalogue = SYSTEM_CATALOGUES[type.objectType];
  if (!catalogue) throw new Error(`no catalogue for ${type.objectType}`);
  return recordSchemaOf(type.objectType[0]?.toUpperCase() + type.objectType.slice(1), catalogue);
}

/** A record of a custom object type: no system fields, every custom one under its slug. */
export const CustomObjectRecord = recordSchemaOf('CustomObjectRecord', { fields: {}, relationships: {} });

function recordSchemaOf(name: string, catalogue: SystemCatalogue) {
  const fields: Record<string, TSchema> = {};
  for (const [key, f] of Object.entries(catalogue.fields)) fields[key] = fieldSchema(f);
  const relationships: Record<string, TSchema> = {};
  for (const [key, r] of Object.entries(catalogue.relationships))
    relationships[key] = Type.Object(
      { cardinality: Type.Literal(r.cardinality), objectType: Type.Literal(r.objectType), values: Type.Array(Type.String()) },
      { additionalProperties: false, description: r.label },
    );
  return Type.Object(
    {
      id: Type.String(),
      createdAt: Type.String({ description: 'ISO 8601 timestamp' }),
      updatedAt: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 timestamp of the last change' }),
      httpLink: Type.Union([Type.String(), Type.Null()]),
      externalId: Type.Union([Type.String(), Type.Null()], { description: 'External identifier; only import sets it.' }),
      fields: Type.Object(fields, { additionalProperties: FieldValue, description: 'Every field of the type; custom fields under bare slugs.' }),
      relationships: Type.Object(relationships, { additionalProperties: Relationship, description: 'Every relationship of the type.' }),
    },
    { $id: name, additionalProperties: false },
  );
}

export function RecordEnvelopeSchema(type: RecordType, item: TSchema) {
  const name = type.plural[0]?.toUpperCase() + type.plural.slice(1);
  return Envelope(item, `${name}Envelope`);
}

// A write value's JSON type is judged by the service against its field's definition, after the
// keys (docs/records.md §Order of checks): the schema takes any JSON here, so that an unknown or
// read-only key is named as such whatever its value, and a wrong type names the field (or its
// member, element) the definition gives it, never a path the field does not have.
const WriteValue = Type.Unsafe<unknown>({
  description: `string, number, boolean, null (clears), array of strings, or an Address or FullName object.\n\n${valueFormatsText()}`,
});
const WriteFields = Type.Record(Type.String(), WriteValue, { description: 'Plain values by field key, each checked against its definition.' });

// Relationship values and operations are judged by the service too, after their keys (an unknown
// or read-only relationship is named as such whatever it holds, docs/records.md §Order of checks).
const Ids = Type.Unsafe<string | string[]>({ description: 'An id or an array of ids.' });
const CreateRelationships = Type.Record(Type.String(), Ids, { description: 'Relationship key → one id or an array of ids.' });

export const CreateBody = Type.Object({ fields: WriteFields, relationships: Type.Optional(CreateRelationships) }, { additionalProperties: false });

/** Opportunities: `relationships` is required (it must hold `$account`). */
export const CreateBodyWithRelationships = Type.Object({ fields: WriteFields, relationships: CreateRelationships }, { additionalProperties: false });

const Operation = Type.Unsafe<{ add?: string | string[]; remove?: string | string[]; replace?: string | string[] | null }>({
  description: 'An object {add, remove} (each an id or an array of ids) or {replace} (an id, an array of ids, or null to clear).',
});

export const UpdateBody = Type.Object(
  {
    fields: Type.Optional(WriteFields),
    relationships: Type.Optional(Type.Record(Type.String(), Operation, { description: 'Relationship key → an operation.' })),
  },
  { additionalProperties: false },
);

/** Notes: each relationship takes add, remove or both, never replace. */
const AddRemoveOperation = Type.Unsafe<{ add?: string | string[]; remove?: string | string[] }>({
  description: 'An object {add}, {remove} or both, each an id or an array of ids; the same id in both is conflicting_membership_change.',
});

export const UpdateBodyAddRemove = Type.Object(
  {
    fields: Type.Optional(WriteFields),
    relationships: Type.Optional(Type.Record(Type.String(), AddRemoveOperation, { description: 'Relationship key → an operation.' })),
  },
  { additionalProperties: false },
);

/** The errors a record write may answer besides the pipeline's (docs/errors.md), for every record type. */
export const WRITE_ERRORS = [
  'unknown_relationship',
  'read_only_field',
  'read_only_relationship',
  'relationship_entity_missing',
  'relationship_entity_inactive',
  'conflicting_membership_change',
  'duplicate_value',
] as const;

export const RecordIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

const Option = Type.Object({ id: Type.String(), label: Type.String(), description: Type.Optional(nullable(Type.String())) }, { additionalProperties: false });

export const FieldDefinition = Type.Object(
  {
    id: Type.Optional(Type.String()),
    label: Type.String(),
    description: nullable(Type.String()),
    valueType: Type.Union([...VALUE_TYPES, 'HTML'].map((v) => Type.Literal(v))),
    readOnly: Type.Optional(Type.Boolean()),
    typeConfiguration: Type.Object(
      {
        options: Type.Optional(Type.Array(Option)),
        currency: Type.Optional(Type.String()),
        unique: Type.Optional(Type.Boolean()),
        multipleValues: Type.Optional(Type.Boolean()),
        handleService: Type.Optional(Type.Union(['TWITTER', 'LINKEDIN', 'FACEBOOK', 'INSTAGRAM'].map((v) => Type.Literal(v)))),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const RelationshipDefinition = Type.Object(
  {
    id: Type.Optional(Type.String()),
    label: Type.String(),
    description: nullable(Type.String()),
    cardinality: Type.Union([Type.Literal('HAS_ONE'), Type.Literal('HAS_MANY')]),
    objectType: Type.String(),
  },
  { additionalProperties: false },
);

export const Definitions = Type.Object(
  {
    objectType: Type.String(),
    fieldDefinitions: Type.Record(Type.String(), FieldDefinition),
    relationshipDefinitions: Type.Record(Type.String(), RelationshipDefinition),
  },
  { $id: 'Definitions', additionalProperties: false },
);

/** A record as lists show their members (the same shape for every type). */
export const AnyRecord = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601 timestamp' }),
    updatedAt: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 timestamp; may be null' }),
    httpLink: Type.Union([Type.String(), Type.Null()]),
    externalId: Type.Union([Type.String(), Type.Null()], { description: 'External identifier; null if unset.' }),
    fields: Fields,
    relationships: Relationships,
  },
  { $id: 'Entity', additionalProperties: false },
);

// The query string of a filterable listing (docs/filtering.md): limit and offset as every list
// takes them, and any other key as a filter. The key names a filter (`$name[equal]`; Fastify's
// query string parser does not nest brackets, so the key arrives exactly as written) and a
// repeated key arrives as an array. The schema only bounds sizes; parseFilters refuses any key
// that is not a filter of the type, so an unknown parameter is still answered with
// invalid_parameter naming it.
const FilterValue = Type.String({ maxLength: MAX_VALUE_LENGTH });

export const FilteredPageQuery = Type.Object(PageQuery.properties, {
  additionalProperties: Type.Union([FilterValue, Type.Array(FilterValue, { maxItems: MAX_FILTERS })]),
  description: 'limit, offset, and filters: `<key>=<value>` or `<key>[<operator>]=<value>` (docs/filtering.md).',
});
export type FilteredPageQuery = Static<typeof FilteredPageQuery>;

// Field value history (docs/history.md).
const Id = Type.String({ minLength: 1, maxLength: 255 });
const FieldKey = Type.String({ minLength: 1, maxLength: 255, description: 'A field key of the type (`$stage`, `tier`).' });

export const HistoryParams = Type.Object({ id: Id, fieldKey: FieldKey }, { additionalProperties: false });

export const ObjectHistoryParams = Type.Object(
  { entitySlug: Type.String({ minLength: 1, maxLength: 255, description: 'The slug of a custom object type.' }), id: Id, fieldKey: FieldKey },
  { additionalProperties: false },
);

export const HistoryQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The `nextCursor` of the previous page.' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100.' }),
  },
  { additionalProperties: false },
);

export const FieldHistoryPage = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          value: Type.Unknown({ description: 'The value the field held, as a retrieve returns it; null when unset.' }),
          valueType: Type.String({ description: 'The data type of the field.' }),
          displayValue: Type.Union([Type.String(), Type.Null()], { description: 'The value as a person reads it; null when unset.' }),
          recordedAt: Type.String({ format: 'date-time', description: 'When the field took this value.' }),
          isCreate: Type.Boolean({ description: 'Whether this is the value the record was created with.' }),
        },
        { additionalProperties: false },
      ),
    ),
    hasMore: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `after` for the next page; null on the last page.' }),
  },
  { $id: 'FieldHistoryPage', additionalProperties: false },
);
