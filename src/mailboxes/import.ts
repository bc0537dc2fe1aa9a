// The `mailbox` import kind (docs/import.md): `user` (externalId), `address`, optional `othersSee`
// (FULL, the default, or METADATA). A re-import updates the mailbox, and brings back one that was
// removed.
import { ImportError, type ImportKind, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { checkAddress, checkOthersSee } from './service.ts';
import type { OthersSee } from './tables.ts';

export interface MailboxInput {
  user: string;
  address: string;
  othersSee: OthersSee;
}

export const mailboxKind: ImportKind<MailboxInput> = {
  object: 'mailbox',
  check(raw) {
    onlyFields(raw, ['user', 'address', 'othersSee']);
    return {
      user: str(raw, 'user', { required: true, max: 255 }) as string,
      address: checkAddress(raw.address),
      othersSee: checkOthersSee(raw.othersSee),
    };
  },
  lookup: (ctx, externalIds) => repo.mailboxesByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    const taken = (line: number, address: string) => new ImportError(line, 'address', `another mailbox of the workspace has the address "${address}"`);
    await upsertByExternalId(ctx, items, {
      object: 'mailbox',
      idKind: 'mbx',
      find: (externalIds) => mailboxKind.lookup(ctx, externalIds),
      async update({ line, value }, _old, id) {
        const userId = await ctx.resolve('user', value.user, { line, field: 'user' });
        const set = { user_id: userId, address: value.address, others_see: value.othersSee, removed_at: null, updated_at: at };
        if (!(await repo.updateMailbox(ctx.db, id, set))) throw taken(line, value.address);
      },
      async insert({ line, externalId, value }, id) {
        const userId = await ctx.resolve('user', value.user, { line, field: 'user' });
        const row = {
          id,
          workspace_id: ctx.actor.workspaceId,
          user_id: userId,
          address: value.address,
          others_see: value.othersSee,
          external_id: externalId,
          created_at: at,
          updated_at: at,
          removed_at: null,
        };
        if (!(await repo.insertMailbox(ctx.db, row))) throw taken(line, value.address);
      },
    });
  },
};
