// What each record kind holds: its id prefix, its system fields (fixed valueType) and its
// relationships. Custom attributes (bare slugs) may have any valueType.
import type { IdKind } from '../lib/ids.ts';
import type { ValueType } from '../lib/resource-schemas.ts';
import type { RecordKind } from './tables.ts';

export interface RelationshipDef {
  objectType: string;
  cardinality: 'has_one' | 'has_many';
}

export interface RecordDef {
  kind: RecordKind;
  idKind: IdKind;
  /** Path segment of httpLink and of the membership listing. */
  plural: 'accounts' | 'contacts' | 'opportunities';
  systemFields: Record<string, ValueType>;
  relationships: Record<string, RelationshipDef>;
}

const owner: RelationshipDef = { objectType: 'user', cardinality: 'has_one' };
const files: RelationshipDef = { objectType: 'file', cardinality: 'has_many' };

export const RECORD_DEFS: Record<RecordKind, RecordDef> = {
  account: {
    kind: 'account',
    idKind: 'acc',
    plural: 'accounts',
    systemFields: { $name: 'TEXT', $domain: 'URL', $address: 'ADDRESS', $industry: 'SINGLE_SELECT', $employees: 'NUMBER', $phone: 'TELEPHONE' },
    relationships: { $owner: owner, $files: files },
  },
  contact: {
    kind: 'contact',
    idKind: 'con',
    plural: 'contacts',
    systemFields: { $name: 'FULL_NAME', $email: 'EMAIL', $phone: 'TELEPHONE', $title: 'TEXT', $address: 'ADDRESS', $linkedin: 'SOCIAL_HANDLE' },
    relationships: { $owner: owner, $account: { objectType: 'account', cardinality: 'has_one' }, $files: files },
  },
  opportunity: {
    kind: 'opportunity',
    idKind: 'opp',
    plural: 'opportunities',
    systemFields: { $name: 'TEXT', $amount: 'CURRENCY', $stage: 'SINGLE_SELECT', $closeDate: 'DATETIME', $description: 'MARKDOWN' },
    relationships: {
      $owner: owner,
      $account: { objectType: 'account', cardinality: 'has_one' },
      $contacts: { objectType: 'contact', cardinality: 'has_many' },
      $files: files,
    },
  },
};

export const RECORD_KINDS = Object.keys(RECORD_DEFS) as RecordKind[];

export const CUSTOM_SLUG = /^[a-z][a-z0-9_]{0,62}$/;
