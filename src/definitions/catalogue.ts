// The system definitions of every record type (docs/records.md §Definitions). They are the same in
// every workspace, so they live here rather than as rows; each workspace sees them with ids of its
// own (derivedId) and may extend their select options and add custom fields and relationships
// (rows of tables.ts). Custom object types and tasks and notes add their catalogues here.
import type { ValueType } from '../lib/resource-schemas.ts';

export type HandleService = 'TWITTER' | 'LINKEDIN' | 'FACEBOOK' | 'INSTAGRAM';

export interface SystemField {
  label: string;
  valueType: ValueType;
  /** EMAIL, URL, TELEPHONE and SOCIAL_HANDLE fields that hold an array of values. */
  multipleValues?: boolean;
  /** Not writable through the API (import may still set it). */
  readOnly?: boolean;
  /** Must be present on create; null on update → invalid_value. */
  required?: boolean;
  handleService?: HandleService;
  /** Labels of the options every workspace starts with (select fields). */
  options?: readonly string[];
  /** The only values a TEXT field takes (a task's `$status`); another → invalid_value. */
  values?: readonly string[];
}

/**
 * How a relationship is stored. `own`: rows of entity_relationships whose source is this record,
 * named by this key. `inverse`: the rows of another type's relationship that point at this
 * record, read through the target index, so both ends always agree. `derived`: computed when
 * read by the module that owns it (meetings, emails).
 */
export type Storage = { kind: 'own' } | { kind: 'inverse'; objectType: string; key: string } | { kind: 'derived' };

export interface SystemRelationship {
  label: string;
  objectType: string;
  cardinality: 'has_one' | 'has_many';
  /** yes: create and update; create: on create only; no: never through the API. */
  writable: 'yes' | 'create' | 'no';
  required?: boolean;
  storage: Storage;
}

export interface SystemCatalogue {
  fields: Readonly<Record<string, SystemField>>;
  relationships: Readonly<Record<string, SystemRelationship>>;
  /** What operators may add to the type (docs/activities.md): notes and tasks take only relationships. */
  custom?: { fields: boolean; relationships: boolean };
}

const own: Storage = { kind: 'own' };
const readOnlyInverse = (label: string, objectType: string, key: string): SystemRelationship => ({
  label,
  objectType,
  cardinality: 'has_many',
  writable: 'no',
  storage: { kind: 'inverse', objectType, key },
});
const files: SystemRelationship = { label: 'Files', objectType: 'file', cardinality: 'has_many', writable: 'no', storage: own };
const owner: SystemRelationship = { label: 'Owner', objectType: 'member', cardinality: 'has_one', writable: 'yes', storage: own };

// Default option sets. The hosted original publishes none, so these are ours; operators add more.
const INDUSTRIES = [
  'Software',
  'Financial services',
  'Healthcare',
  'Manufacturing',
  'Retail',
  'Education',
  'Media',
  'Telecommunications',
  'Energy',
  'Transportation',
  'Real estate',
  'Professional services',
  'Government',
  'Non-profit',
  'Other',
];
const HEADCOUNTS = ['1-10', '11-50', '51-200', '201-500', '501-1,000', '1,001-5,000', '5,001-10,000', '10,001+'];
const FUNDING_TYPES = ['Pre-seed', 'Seed', 'Series A', 'Series B', 'Series C', 'Series D or later', 'Private equity', 'Debt', 'Grant', 'Public'];
export const TASK_STATUSES = ['TODO', 'IN_PROGRESS', 'COMPLETE', 'CANCELLED'] as const;
const STAGES = ['Lead', 'Qualified', 'Discovery', 'Proposal', 'Negotiation', 'Closed won', 'Closed lost'];

// Looked up by a type's name, which may be a custom type's slug: the object inherits nothing, so
// that a slug such as `constructor` names no catalogue (docs/activities.md §Custom objects).
export const SYSTEM_CATALOGUES: Readonly<Record<string, SystemCatalogue>> = Object.assign(Object.create(null) as Record<string, SystemCatalogue>, {
  account: {
    fields: {
      $name: { label: 'Name', valueType: 'TEXT', required: true },
      $website: { label: 'Website', valueType: 'URL', multipleValues: true },
      $industry: { label: 'Industry', valueType: 'MULTI_SELECT', options: INDUSTRIES },
      $headcount: { label: 'Headcount', valueType: 'SINGLE_SELECT', options: HEADCOUNTS },
      $lastFundingType: { label: 'Last funding type', valueType: 'SINGLE_SELECT', options: FUNDING_TYPES },
      $primaryAddress: { label: 'Primary address', valueType: 'ADDRESS' },
      $linkedIn: { label: 'LinkedIn', valueType: 'SOCIAL_HANDLE', handleService: 'LINKEDIN' },
      $twitter: { label: 'Twitter', valueType: 'SOCIAL_HANDLE', handleService: 'TWITTER' },
      $facebook: { label: 'Facebook', valueType: 'SOCIAL_HANDLE', handleService: 'FACEBOOK' },
      $instagram: { label: 'Instagram', valueType: 'SOCIAL_HANDLE', handleService: 'INSTAGRAM' },
      $howTheyMakeMoney: { label: 'How they make money', valueType: 'MARKDOWN', readOnly: true },
      $accountStatus: { label: 'Account status', valueType: 'TEXT', readOnly: true },
    },
    relationships: {
      $owner: owner,
      // One link seen from both ends: stored as the contact's `$account` rows.
      $contact: {
        label: 'Contacts',
        objectType: 'contact',
        cardinality: 'has_many',
        writable: 'yes',
        storage: { kind: 'inverse', objectType: 'contact', key: '$account' },
      },
      $opportunity: readOnlyInverse('Opportunities', 'opportunity', '$account'),
      $task: readOnlyInverse('Tasks', 'task', '$account'),
      $note: readOnlyInverse('Notes', 'note', '$account'),
      $meeting: { label: 'Meetings', objectType: 'meeting', cardinality: 'has_many', writable: 'no', storage: { kind: 'derived' } },
      $files: files,
    },
  },
  contact: {
    fields: {
      $name: { label: 'Name', valueType: 'FULL_NAME' },
      $email: { label: 'Email', valueType: 'EMAIL', multipleValues: true },
      $profilePhotoUrl: { label: 'Profile photo', valueType: 'URL' },
    },
    relationships: {
      $account: { label: 'Accounts', objectType: 'account', cardinality: 'has_many', writable: 'yes', storage: own },
      $meeting: { label: 'Meetings', objectType: 'meeting', cardinality: 'has_many', writable: 'no', storage: { kind: 'derived' } },
      $files: files,
      $note: readOnlyInverse('Notes', 'note', '$contact'),
    },
  },
  opportunity: {
    fields: {
      $name: { label: 'Name', valueType: 'TEXT', required: true },
      $stage: { label: 'Stage', valueType: 'SINGLE_SELECT', required: true, options: STAGES },
      $opportunityStatus: { label: 'Status', valueType: 'TEXT', readOnly: true },
    },
    relationships: {
      $account: { label: 'Account', objectType: 'account', cardinality: 'has_one', writable: 'yes', required: true, storage: own },
      $owner: owner,
      $createdBy: { label: 'Created by', objectType: 'member', cardinality: 'has_one', writable: 'create', storage: own },
      $champion: { label: 'Champion', objectType: 'contact', cardinality: 'has_one', writable: 'yes', storage: own },
      $evaluator: { label: 'Evaluator', objectType: 'contact', cardinality: 'has_one', writable: 'yes', storage: own },
      $task: readOnlyInverse('Tasks', 'task', '$opportunity'),
      $note: readOnlyInverse('Notes', 'note', '$opportunity'),
      $meeting: { label: 'Meetings', objectType: 'meeting', cardinality: 'has_many', writable: 'no', storage: { kind: 'derived' } },
      $files: files,
    },
  },
  note: {
    fields: {
      $title: { label: 'Title', valueType: 'TEXT', required: true },
      $content: { label: 'Content', valueType: 'MARKDOWN' },
    },
    relationships: {
      $account: { label: 'Accounts', objectType: 'account', cardinality: 'has_many', writable: 'yes', storage: own },
      $opportunity: { label: 'Opportunities', objectType: 'opportunity', cardinality: 'has_many', writable: 'yes', storage: own },
      // The author: filled on create from the calling user, never written through the API.
      $createdBy: { label: 'Created by', objectType: 'member', cardinality: 'has_one', writable: 'no', storage: own },
      $contact: { label: 'Contacts', objectType: 'contact', cardinality: 'has_many', writable: 'yes', storage: own },
    },
    custom: { fields: false, relationships: true },
  },
  task: {
    fields: {
      $title: { label: 'Title', valueType: 'TEXT', required: true },
      $status: { label: 'Status', valueType: 'TEXT', required: true, values: TASK_STATUSES },
      $description: { label: 'Description', valueType: 'MARKDOWN' },
      $dueAt: { label: 'Due at', valueType: 'DATETIME' },
    },
    relationships: {
      $assignedTo: { label: 'Assigned to', objectType: 'member', cardinality: 'has_one', writable: 'yes', required: true, storage: own },
      $account: { label: 'Account', objectType: 'account', cardinality: 'has_one', writable: 'yes', storage: own },
      $opportunity: { label: 'Opportunity', objectType: 'opportunity', cardinality: 'has_one', writable: 'yes', storage: own },
      $createdBy: { label: 'Created by', objectType: 'member', cardinality: 'has_one', writable: 'create', storage: own },
      // Filled by import only: the note API links notes to accounts and opportunities, not to tasks.
      $note: { label: 'Notes', objectType: 'note', cardinality: 'has_many', writable: 'no', storage: own },
    },
    custom: { fields: false, relationships: true },
  },
} satisfies Record<string, SystemCatalogue>);
