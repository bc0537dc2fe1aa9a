// The `list` import kind (docs/import.md §`list`): a name, the type of its members, and its
// members by externalId. A re-import renames the list and replaces its members with the listed
// ones; its type never changes. The events are those of the API's creates and updates.
//
// An import that takes its listings' locks late (`ctx.locksLate`) renames and changes the members
// of lists that existed before it only under those locks, in `underLocks`: a server's delete of a
// record takes the record's listing before the lists that hold it, so an import that held such a
// list from its link step and took the listing at its end would wait for the delete as the delete
// waits for it (docs/pages.md §Long transactions). Lists the import creates are seen by nobody
// else until it commits, and are written in the link step.
import { appendEvent } from '../changes/service.ts';
import { type ImportContext, type ImportItem, type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import type { RecordKind } from '../records/tables.ts';
import * as repo from './repository.ts';
import type { ListRow } from './repository.ts';
import { toResource } from './service.ts';
import { longerThan } from '../lib/chars.ts';

interface ListInput {
  name: string;
  objectType: RecordKind;
  members: string[];
}

const TYPES: readonly RecordKind[] = ['account', 'contact', 'opportunity'];

/** The lists this import created, and the existing ones whose writes wait for `underLocks`. */
const LEFT = Symbol('lists');
const left = (ctx: ImportContext) => ctx.kept(LEFT, () => ({ created: new Set<string>(), existing: [] as { item: ImportItem<ListInput>; id: string }[] }));

export const listKind: ImportKind<ListInput> = {
  object: 'list',
  check(raw) {
    onlyFields(raw, ['name', 'objectType', 'members']);
    const name = (str(raw, 'name', { required: true }) as string).trim();
    if (name.length < 1 || longerThan(name, 255)) throw new InputError('must be 1 to 255 characters (after trimming spaces)', 'name');
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
      async update({ line, externalId, value }, old) {
        if (old.object_type !== value.objectType)
          throw new ImportError(line, 'objectType', `the list "${externalId}" holds ${old.object_type} records; a list's objectType cannot change`);
        if (!ctx.locksLate) await rename(ctx, old, value.name);
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
    for (const item of items) {
      const id = await ctx.resolve('list', item.externalId, { line: item.line, field: 'externalId' });
      if (ctx.locksLate && !created.has(id)) existing.push({ item, id });
      else await replaceMembers(ctx, item, await listRow(ctx, item, id, 'is gone'));
    }
  },
  async underLocks(ctx) {
    for (const { item, id } of left(ctx).existing) {
      const row = await listRow(ctx, item, id, 'was deleted while this import ran; import again');
      await replaceMembers(ctx, item, await rename(ctx, row, item.value.name));
    }
  },
};

async function listRow(ctx: ImportContext, { line, externalId }: ImportItem<ListInput>, id: string, gone: string): Promise<ListRow> {
  const [row] = (await repo.findLists(ctx.db, ctx.actor.workspaceId, [id])).values();
  if (!row) throw new ImportError(line, 'externalId', `the list "${externalId}" ${gone}`);
  return row;
}

/** Gives the list its imported name (an event when it changes); returns the row as it is then. */
async function rename(ctx: ImportContext, old: ListRow, name: string): Promise<ListRow> {
  if (old.name === name) return old;
  await repo.updateList(ctx.db, old.id, { name, delta: 0, at: isoNow(ctx.now) });
  const row = { ...old, name };
  await appendEvent(ctx, { type: 'list.updated', object: toResource(ctx, row), changes: { $name: { from: old.name, to: name } } });
  return row;
}

/** Makes the listed records the list's members, in one change; events as the API's update. */
async function replaceMembers(ctx: ImportContext, { line, value }: ImportItem<ListInput>, row: ListRow): Promise<void> {
  const found = await ctx.resolveAll(value.objectType, value.members);
  const wanted = value.members.map((ext, i) => {
    const id = found.get(ext);
    if (id === undefined) throw new ImportError(line, `members[${i}]`, `no ${value.objectType} with externalId "${ext}" in this import or the workspace`);
    return id;
  });
  const id = row.id;
  const keep = new Set(wanted);
  const at = isoNow(ctx.now);
  const removed = await repo.removeMembers(
    ctx.db,
    id,
    (await repo.membersInOrder(ctx.db, id)).map((m) => m.entity_id).filter((m) => !keep.has(m)),
  );
  const added = await repo.addMembers(ctx.db, id, wanted, at);
  const delta = added.length - removed.length;
  if (delta !== 0) await repo.updateList(ctx.db, id, { delta, at });
  const list = toResource(ctx, row);
  if (added.length > 0) await appendEvent(ctx, { type: 'list.members_added', object: list, members: added });
  if (removed.length > 0) await appendEvent(ctx, { type: 'list.members_removed', object: list, members: removed });
}
