// Custom object types (docs/activities.md §Custom objects): operators define them (slug, label)
// through the CLI or the import kind `definition`; the API lists them and serves their records.
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { checkLabel, outerSpaceless } from './labels.ts';
import { CUSTOM_KEY, definitionWrite } from './service.ts';

/** Names a custom type can never take: the system types and the other objects of the API. */
export const RESERVED_TYPES: ReadonlySet<string> = new Set([
  'account',
  'contact',
  'opportunity',
  'task',
  'note',
  'meeting',
  'email',
  'member',
  'list',
  'file',
  'message',
  'channel',
]);

/**
 * Names a new custom type cannot take beside the system types: the other objects whose events are
 * named `<object>.<action>` as records' are (docs/events.md), so that a receiver routing events by
 * that prefix never meets two kinds of object under one. A type created before this rule keeps
 * its name and its records, and an import takes its line, so that an export of its workspace
 * imports again (docs/activities.md §Custom objects).
 */
const EVENT_OBJECTS: ReadonlySet<string> = new Set(['enrichment_run', 'webhook']);

/**
 * Names a new custom type cannot take beside the system types: the other objects of `rolodex
 * import` (docs/import.md §Format). An import finds a relationship's targets by their type's name,
 * so a link to a record of a type named `user` would be looked up among the users, and the export
 * of its workspace would not import again. A type created before this rule keeps its name, and an
 * import takes its line (docs/activities.md §Custom objects).
 */
const IMPORT_OBJECTS: ReadonlySet<string> = new Set(['user', 'mailbox', 'workspace', 'definition', 'record']);

export interface ObjectType {
  objectType: string;
  label: string;
}

/** Defines a custom object type in ctx's workspace. */
export function defineObjectType(ctx: Ctx, given: { slug: string; label: string }, opts: { imported?: boolean } = {}): Promise<ObjectType> {
  const input = outerSpaceless(given);
  return definitionWrite(ctx, async (ctx) => {
    if (!CUSTOM_KEY.test(input.slug)) throw new InputError('must match ^[a-z][a-z0-9_]{0,62}$', 'slug');
    if (RESERVED_TYPES.has(input.slug)) throw new InputError(`"${input.slug}" is the name of a system type`, 'slug');
    if (EVENT_OBJECTS.has(input.slug) && !opts.imported) throw new InputError(`"${input.slug}" names the events of another object`, 'slug');
    if (IMPORT_OBJECTS.has(input.slug) && !opts.imported) throw new InputError(`"${input.slug}" names a kind of object of rolodex import`, 'slug');
    checkLabel(input.label);
    if (await repo.findObjectType(ctx.db, ctx.actor.workspaceId, input.slug)) throw new InputError(`object type "${input.slug}" exists`, 'slug');
    await repo.insertObjectType(ctx.db, { workspace_id: ctx.actor.workspaceId, slug: input.slug, label: input.label, created_at: isoNow(ctx.now) });
    return { objectType: input.slug, label: input.label };
  });
}

/**
 * Gives the custom object type `slug` another label, keeping its slug (a re-import of its line,
 * docs/import.md §definition); its records and definitions are untouched.
 */
export function relabelObjectType(ctx: Ctx, given: { slug: string; label: string }): Promise<ObjectType> {
  const input = outerSpaceless(given);
  return definitionWrite(ctx, async (ctx) => {
    checkLabel(input.label);
    if (!(await repo.findObjectType(ctx.db, ctx.actor.workspaceId, input.slug))) throw new InputError(`unknown object type "${input.slug}"`, 'slug');
    await repo.updateObjectTypeLabel(ctx.db, ctx.actor.workspaceId, input.slug, input.label);
    return { objectType: input.slug, label: input.label };
  });
}

/** The workspace's custom object types, ordered by slug. */
export async function listObjectTypes(ctx: Ctx): Promise<ObjectType[]> {
  return (await repo.listObjectTypes(ctx.db, ctx.actor.workspaceId)).map((r) => ({ objectType: r.slug, label: r.label }));
}

/** The custom object type `slug` of ctx's workspace, or undefined. */
export async function findObjectType(ctx: Ctx, slug: string): Promise<ObjectType | undefined> {
  const row = await repo.findObjectType(ctx.db, ctx.actor.workspaceId, slug);
  return row && { objectType: row.slug, label: row.label };
}
