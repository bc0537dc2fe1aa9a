// The `user` import kind (docs/design.md §Import format): email, name and role.
import { type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
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
    return checkUser({ email, name: str(raw, 'name', { max: 255 }), role: str(raw, 'role') ?? 'member' });
  },
  lookup: (ctx, externalIds) => repo.usersByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    await upsertByExternalId(ctx, items, {
      object: 'user',
      idKind: 'usr',
      find: (externalIds) => userKind.lookup(ctx, externalIds),
      update: ({ value: { email, name, role } }, _old, id) => repo.updateUser(ctx.db, id, { email, name, role, updated_at: at }),
      async insert({ line, externalId, value: { email, name, role } }, id) {
        const row = { id, workspace_id: ctx.actor.workspaceId, external_id: externalId, email, name, role, created_at: at, updated_at: at };
        if (!(await repo.insertUser(ctx.db, row))) throw new ImportError(line, 'email', `another user of the workspace has the email "${email}"`);
      },
    });
  },
};
