// The `user` import kind (docs/design.md §Import format): email, the name (`name`, split at its
// first space, or `firstName` and `lastName`), role and profileImageUrl.
import { type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { type CheckedUser, checkUser, userColumns } from './service.ts';

export const userKind: ImportKind<CheckedUser> = {
  object: 'user',
  check(raw) {
    onlyFields(raw, ['email', 'name', 'firstName', 'lastName', 'role', 'profileImageUrl']);
    const email = str(raw, 'email', { required: true }) as string;
    // checkUser's InputError names the field as its param.
    return checkUser({
      email,
      name: str(raw, 'name'),
      firstName: str(raw, 'firstName'),
      lastName: str(raw, 'lastName'),
      role: str(raw, 'role') ?? 'member',
      profileImageUrl: str(raw, 'profileImageUrl'),
    });
  },
  lookup: (ctx, externalIds) => repo.usersByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    const fresh: { line: number; row: repo.UserRow }[] = [];
    // The address keys of the chunk's new users, by the lines before the one at hand: a later line
    // that gives one of them to a user already there is the line refused, as it would be were each
    // new user inserted at its own line rather than with the chunk's. A later line whose user keeps
    // the address it holds takes none: the new user's line is the one refused, when inserted.
    const queued = new Set<string>();
    await upsertByExternalId(ctx, items, {
      object: 'user',
      idKind: 'usr',
      find: (externalIds) => repo.userRowsByName(ctx.db, ctx.actor.workspaceId, externalIds),
      async update({ line, value }, old, id) {
        const set = userColumns(value);
        // A line equal to the user writes nothing: its updatedAt stays (an export imported again changes nothing).
        if ((Object.keys(set) as (keyof typeof set)[]).every((k) => set[k] === old[k])) return;
        const takes = set.email_key !== null && set.email_key !== old.email_key && queued.has(set.email_key);
        if (takes || !(await repo.updateUser(ctx.db, id, { ...set, updated_at: at })))
          throw new ImportError(line, 'email', `another user of the workspace has the email "${value.email}"`);
      },
      insert({ line, externalId, value }, id) {
        const row = { id, workspace_id: ctx.actor.workspaceId, external_id: externalId, ...userColumns(value), created_at: at, updated_at: at };
        fresh.push({ line, row });
        if (row.email_key !== null) queued.add(row.email_key);
      },
    });
    // The chunk's new users in a few statements. An address held already (after the updates above,
    // which may free one) is named with its line first; one that a user created through the API
    // meanwhile takes stops the import at the chunk's first new user.
    const rows = fresh.map((f) => f.row);
    const held = await repo.heldEmailKeys(
      ctx.db,
      ctx.actor.workspaceId,
      rows.flatMap((r) => (r.email_key === null ? [] : [r.email_key])),
    );
    for (const { line, row } of fresh) {
      if (row.email_key !== null && held.has(row.email_key)) throw new ImportError(line, 'email', `another user of the workspace has the email "${row.email}"`);
      if (row.email_key !== null) held.add(row.email_key);
    }
    if (!(await repo.insertUsers(ctx.db, ctx.actor.workspaceId, rows)))
      throw new ImportError(
        fresh[0]?.line ?? 0,
        'email',
        'another user of the workspace took one of the addresses of this chunk while the import ran; import again',
      );
  },
};
