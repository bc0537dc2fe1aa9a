// The `user` import kind (docs/design.md §Import format): email, the name (`name`, split at its
// first space, or `firstName` and `lastName`), role and profileImageUrl.
import { type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { emailKey } from '../lib/email.ts';
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
    const ws = ctx.actor.workspaceId;
    const fresh: { line: number; row: repo.UserRow }[] = [];
    // Lines are judged in file order, whatever the chunks (docs/import.md §`user`): each as if the
    // lines before it were written and those after it not, although the chunk's new users are
    // inserted together at its end. So every address a line of the chunk takes is looked up with
    // its holder first, and the holders then follow the lines: an address an earlier line leaves
    // is free, one a later line leaves is still held, one an earlier new user takes is held.
    const holders = await repo.emailKeyHolders(
      ctx.db,
      ws,
      items.map((i) => emailKey(i.value.email)),
    );
    const refuse = (line: number, email: string) => new ImportError(line, 'email', `another user of the workspace has the email "${email}"`);
    await upsertByExternalId(ctx, items, {
      object: 'user',
      idKind: 'usr',
      find: (externalIds) => repo.userRowsByName(ctx.db, ws, externalIds),
      async update({ line, value }, old, id) {
        const set = userColumns(value);
        // A line equal to the user writes nothing: its updatedAt stays (an export imported again changes nothing).
        if ((Object.keys(set) as (keyof typeof set)[]).every((k) => set[k] === old[k])) return;
        if (set.email_key !== null && set.email_key !== old.email_key) {
          const holder = holders.get(set.email_key);
          if (holder !== undefined && holder !== id) throw refuse(line, value.email);
          if (old.email_key !== null && holders.get(old.email_key) === id) holders.delete(old.email_key);
          holders.set(set.email_key, id);
        }
        // A user the API gave the address since the lookup is refused by the database.
        if (!(await repo.updateUser(ctx.db, id, { ...set, updated_at: at }))) throw refuse(line, value.email);
      },
      insert({ line, externalId, value }, id) {
        const row = { id, workspace_id: ws, external_id: externalId, ...userColumns(value), created_at: at, updated_at: at };
        if (row.email_key !== null) {
          if (holders.has(row.email_key)) throw refuse(line, row.email);
          holders.set(row.email_key, id);
        }
        fresh.push({ line, row });
      },
    });
    // The chunk's new users in a few statements, after its updates: none takes an address a user
    // holds then (see above), unless a user the API created meanwhile does, which stops the import
    // at the chunk's first new user.
    if (
      !(await repo.insertUsers(
        ctx.db,
        ws,
        fresh.map((f) => f.row),
      ))
    )
      throw new ImportError(
        fresh[0]?.line ?? 0,
        'email',
        'another user of the workspace took one of the addresses of this chunk while the import ran; import again',
      );
  },
};
