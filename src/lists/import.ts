// The `list` import kind (docs/import.md §`list`): a name, the type of its members, and its
// members by externalId. A re-import renames the list and replaces its members with the listed
// ones; its type never changes. The events are those of the API's creates and updates.
//
// A list's name, members and count are written in one step, under locks taken in the order every
// writer of a list takes them (docs/design.md §Database, "The order of locks"): the lists' rows
// against deletion, then their members' sets, then the writes. In another order the import and a
// delete wait for each other: a rename before the set holds the row that a member's delete, which
// holds the set, waits for to change the count; a set held before the row is locked is what the
// list's delete, which holds the row, waits for.
//
// An import that takes its listings' locks late (`ctx.locksLate`) writes the lists that existed
// before it only under those locks, in `underLocks`: a server's delete of a record takes the
// record's listing before the lists that hold it, so an import that held such a list from its
// link step and took the listing at its end would wait for the delete as the delete waits for it
// (docs/pages.md §Long transactions). Lists the import creates are seen by nobody else until it
// commits, and are written in the link step, as every list is by an import that takes its locks as
// it goes (batched, or on SQLite).
import { appendEvent } from '../changes/service.ts';
import { type ImportContext, type ImportItem, type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import type { RecordKind } from '../records/tables.ts';
import * as repo from './repository.ts';
import type { ListRow } from './repository.ts';
import { toResource } from './service.ts';
import { blank, longerThan } from '../lib/chars.ts';

interface ListInput {
  name: string;
  objectType: RecordKind;
  members: string[];
}

const TYPES: readonly RecordKind[] = ['account', 'contact', 'opportunity'];

/** A list's line and the list's id. */
type Pending = { item: ImportItem<ListInput>; id: string };

/** The lists this import created, and the existing ones whose writes wait for `underLocks`. */
const LEFT = Symbol('lists');
const left = (ctx: ImportContext) => ctx.kept(LEFT, () => ({ created: new Set<string>(), existing: [] as Pending[] }));

export const listKind: ImportKind<ListInput> = {
  object: 'list',
  check(raw) {
    onlyFields(raw, ['name', 'objectType', 'members']);
    const name = (str(raw, 'name', { required: true }) as string).trim();
    if (blank(name) || longerThan(name, 255))
      throw new InputError('must be 1 to 255 characters (after trimming spaces), not white space or invisible characters alone', 'name');
    const objectType = str(raw, 'objectType', { required: true }) as RecordKind;
    if (!TYPES.includes(objectType)) throw new InputError(`must be one of ${TYPES.join(', ')}`, 'objectType');
    const m = raw.members ?? [];
    if (!Array.isArray(m)) throw new InputError(`must be an array of ${objectType} externalIds`, 'members');
    m.forEach((x, i) => {
      if (typeof x !== 'string' || x.length === 0) throw new InputError(`must be a ${objectType} externalId (a non-empty string)`, `members[${i}]`);
    });
    return { name, objectType, members: [...new Set(m as string[])] };
  },
  references: (_ctx, { value }) => value.members.map((externalId, i) => ({ object: value.objectType, externalId, field: `members[${i}]` })),
  async lookup(ctx, externalIds) {
    const rows = await repo.listsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds);
    return new Map([...rows].map(([ext, row]) => [ext, row.id]));
  },
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    await upsertByExternalId(ctx, items, {
      object: 'list',
      idKind: 'lst',
      find: (externalIds) => repo.listsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
      // The new name is written with the members (`writeLists`), under the list's locks.
      async update({ line, externalId, value }, old) {
        if (old.object_type !== value.objectType)
          throw new ImportError(line, 'objectType', `the list "${externalId}" holds ${old.object_type} records; a list's objectType cannot change`);
      },
      async insert({ externalId, value }, id) {
        const row = {
          id,
          workspace_id: ctx.actor.workspaceId,
          external_id: externalId,
          name: value.name,
          object_type: value.objectType,
          member_count: 0,
          created_at: at,
          updated_at: at,
        };
        await repo.insertList(ctx.db, row);
        left(ctx).created.add(id);
        await appendEvent(ctx, { type: 'list.created', object: toResource(ctx, row) });
      },
    });
  },
  async link(ctx, items) {
    const { created, existing } = left(ctx);
    const now: Pending[] = [];
    for (const item of items) {
      const id = await ctx.resolve('list', item.externalId, { line: item.line, field: 'externalId' });
      (ctx.locksLate && !created.has(id) ? existing : now).push({ item, id });
    }
    await writeLists(ctx, now);
  },
  async underLocks(ctx) {
    await writeLists(ctx, left(ctx).existing);
  },
};

/**
 * Gives each list its imported name and members: every list locked first (`listsToChange`), then
 * each written in turn. A list deleted since the import found it stops the import.
 */
async function writeLists(ctx: ImportContext, lists: readonly Pending[]): Promise<void> {
  if (lists.length === 0) return;
  const rows = await repo.listsToChange(
    ctx.db,
    ctx.actor.workspaceId,
    lists.map((l) => l.id),
  );
  for (const { item, id } of lists) {
    const row = rows.get(id);
    if (!row) throw new ImportError(item.line, 'externalId', `the list "${item.externalId}" was deleted while this import ran; import again`);
    await writeList(ctx, item, row);
  }
}

/**
 * Makes the list's name the imported one and the listed records its members, in one change, its
 * locks held; events as the API's update: `list.updated` when the name changes, then the members'.
 */
async function writeList(ctx: ImportContext, { line, value }: ImportItem<ListInput>, old: ListRow): Promise<void> {
  const found = await ctx.resolveAll(value.objectType, value.members);
  const wanted = value.members.map((ext, i) => {
    const id = found.get(ext);
    if (id === undefined) throw new ImportError(line, `members[${i}]`, `no ${value.objectType} with externalId "${ext}" in this import or the workspace`);
    return id;
  });
  const id = old.id;
  const keep = new Set(wanted);
  const at = isoNow(ctx.now);
  const removed = await repo.removeMembers(
    ctx.db,
    id,
    (await repo.membersInOrder(ctx.db, id)).map((m) => m.entity_id).filter((m) => !keep.has(m)),
  );
  const added = await repo.addMembers(ctx.db, id, wanted, at);
  const delta = added.length - removed.length;
  const renamed = old.name !== value.name;
  if (renamed || delta !== 0) await repo.updateList(ctx.db, id, { ...(renamed ? { name: value.name } : {}), delta, at });
  const list = toResource(ctx, { ...old, name: value.name });
  if (renamed) await appendEvent(ctx, { type: 'list.updated', object: list, changes: { $name: { from: old.name, to: value.name } } });
  if (added.length > 0) await appendEvent(ctx, { type: 'list.members_added', object: list, members: added });
  if (removed.length > 0) await appendEvent(ctx, { type: 'list.members_removed', object: list, members: removed });
}
