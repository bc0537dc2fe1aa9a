// The event types the server writes (docs/events.md §Types), the one list that both sides read:
// writers name their types through EventType, the merge routes are made for MERGEABLE_TYPES, and
// a webhook subscription takes a type only when eventTypes() lists it, so that no endpoint waits
// for an event that is never written.
import type { RecordKind } from '../records/tables.ts';

/** What every record, meeting and list goes through: a create, an update, a delete, a restore. */
export const LIFECYCLE_ACTIONS = ['created', 'updated', 'deleted', 'restored'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

/** The system types with lifecycle events; every custom object type (its slug) has them too. */
export const LIFECYCLE_TYPES = ['account', 'contact', 'opportunity', 'task', 'note', 'meeting', 'list'] as const satisfies readonly (
  RecordKind | 'meeting' | 'list'
)[];

/**
 * The system types a merge is of (docs/merge.md): only they, and every custom object type, have
 * `<type>.merged`. Tasks, notes, meetings and lists are never merged.
 */
export const MERGEABLE_TYPES = ['account', 'contact', 'opportunity'] as const satisfies readonly RecordKind[];
export type MergeableType = (typeof MERGEABLE_TYPES)[number];

/** The types of one kind of object alone, written as they stand. */
export const OWN_EVENT_TYPES = ['list.members_added', 'list.members_removed', 'email.sent', 'file.completed', 'enrichment_run.completed'] as const;
export type OwnEventType = (typeof OWN_EVENT_TYPES)[number];

/** Sent by `rolodex webhook test` to the one subscription tested, whatever it takes; never stored. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * A type a writer appends: `<type>.<action>` of a system type or a custom object's slug, or a type
 * of its own. The compiler checks the action; that `<type>.merged` names a mergeable type holds by
 * construction (only the merge routes of MERGEABLE_TYPES and of custom types write it).
 */
export type EventType = `${string}.${LifecycleAction}` | `${string}.merged` | OwnEventType;

const SYSTEM: ReadonlySet<string> = new Set(LIFECYCLE_TYPES);
const MERGEABLE: ReadonlySet<string> = new Set(MERGEABLE_TYPES);

/** Whether records of `objectType` (a system type or a custom object's slug) are ever merged. */
export function isMergeable(objectType: string): boolean {
  return MERGEABLE.has(objectType) || !SYSTEM.has(objectType);
}

/**
 * Every event type written in a workspace whose custom object types are `customTypes`: the
 * system types' lifecycle events (and merges of the mergeable ones), each custom type's lifecycle
 * events and merges, then the types of one kind of object alone.
 */
export function eventTypes(customTypes: readonly string[]): string[] {
  const lifecycle = (t: string) => [...LIFECYCLE_ACTIONS.map((a) => `${t}.${a}`), ...(isMergeable(t) ? [`${t}.merged`] : [])];
  return [...LIFECYCLE_TYPES.flatMap(lifecycle), ...customTypes.flatMap(lifecycle), ...OWN_EVENT_TYPES];
}
