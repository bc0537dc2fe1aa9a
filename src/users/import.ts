// The `user` import kind (docs/design.md §Import format): email, name and role.
import { isUniqueViolation } from '../db/database.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { type ImportKind, ImportError, lookupExternalIds, onlyFields, str } from '../import/kind.ts';
import { checkUser } from './service.ts';

interface UserInput {
  email: string;
  name: string | null;
  role: 'admin' | 'member';
}

export const userKind: ImportKind<UserInput> = {
  object: 'user',
  check(raw) {
    onlyFields(raw, ['email', 'name', 'role']);
    const email = str(raw, 'email', { required: true }) as string;
    // checkUser's InputError names the field (email, name or role) as its param.
    return checkUser({ workspaceId: '', email, name: str(raw, 'name', { max: 255 }), role: str(raw, 'role') ?? 'member' });
  },
  lookup: (tx, workspaceId, externalIds) => lookupExternalIds(tx, 'users', workspaceId, externalIds),
  async upsert(ctx, items) {
    const existing = await userKind.lookup(ctx.tx, ctx.workspaceId, items.map((i) => i.externalId));
    const at = isoNow(ctx.now);
    for (const item of items) {
      const { email, name, role } = item.value;
      let id = existing.get(item.externalId);
      if (id) {
        await ctx.tx.updateTable('users').set({ email, name, role, updated_at: at }).where('id', '=', id).execute();
      } else {
        id = newId('usr', ctx.now);
        try {
          await ctx.tx
            .insertInto('users')
            .values({ id, workspace_id: ctx.workspaceId, external_id: item.externalId, email, name, role, created_at: at, updated_at: at })
            .execute();
        } catch (err) {
          if (isUniqueViolation(err)) throw new ImportError(item.line, 'email', `another user of the workspace has the email "${email}"`);
          throw err;
        }
      }
      ctx.register('user', item.externalId, id);
    }
  },
};
