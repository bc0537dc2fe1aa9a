// The value types of fields (docs/records.md), apart from the schemas of src/lib/resource-schemas.ts:
// the services a command runs load this list, never TypeBox.
export const VALUE_TYPES = [
  'ADDRESS',
  'CHECKBOX',
  'CURRENCY',
  'DATETIME',
  'EMAIL',
  'FULL_NAME',
  'MARKDOWN',
  'MULTI_SELECT',
  'NUMBER',
  'SINGLE_SELECT',
  'SOCIAL_HANDLE',
  'TELEPHONE',
  'TEXT',
  'URL',
] as const;
export type ValueType = (typeof VALUE_TYPES)[number];
