// Row types of the definitions operators add (docs/records.md §Definitions): custom fields,
// options (of custom and of system select fields) and custom relationships. System definitions
// have no rows (catalogue.ts).

export interface FieldDefinitionsTable {
  id: string;
  workspace_id: string;
  object_type: string;
  key: string;
  label: string;
  description: string | null;
  value_type: string;
  /** JSON: { currency?, unique?, multipleValues?, handleService? } */
  config: string;
  created_at: string;
  /** Order of the type's custom fields, from 0 in creation order (migration 0014). */
  position: number;
}

export interface SelectOptionsTable {
  id: string;
  workspace_id: string;
  object_type: string;
  /** The field's key: options may extend a system field (`$stage`) as well as a custom one. */
  field_key: string;
  label: string;
  description: string | null;
  /** Order of the options of one field. */
  position: number;
}

export interface RelationshipDefinitionsTable {
  id: string;
  workspace_id: string;
  object_type: string;
  key: string;
  label: string;
  description: string | null;
  cardinality: 'has_one' | 'has_many';
  target_type: string;
  created_at: string;
  /** Order of the type's custom relationships, from 0 in creation order (migration 0014). */
  position: number;
}

/** A custom object type (docs/activities.md §Custom objects); its records have kind = slug. */
export interface ObjectTypesTable {
  workspace_id: string;
  slug: string;
  label: string;
  created_at: string;
}

/**
 * The version of a workspace's definitions, moved by triggers on every write of the tables above
 * (migration 0017); no row is version 0. Caches of built definitions compare it (docs/records.md).
 */
export interface DefinitionVersionsTable {
  workspace_id: string;
  version: number;
}

declare module '../db/types.ts' {
  interface Database {
    definition_versions: DefinitionVersionsTable;
    object_types: ObjectTypesTable;
    field_definitions: FieldDefinitionsTable;
    select_options: SelectOptionsTable;
    relationship_definitions: RelationshipDefinitionsTable;
  }
}
