// The `channel` import kind (docs/design.md §Import format): provider, name, visibility and members
// (user externalIds). Re-importing a channel replaces its members with the listed ones.
import { type ImportKind, ImportError, lookupExternalIds, onlyFields, str } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import type { Visibility } from './tables.ts';
import { applyVisibility, checkLabel, checkVisibility, replaceMembers } from './service.ts';

interface ChannelInput {
  provider: string;
  name: string;
  visibility: Visibility;
  members: string[];
}

export const channelKind: ImportKind<ChannelInput> = {
  object: 'channel',
  check(raw) {
    onlyFields(raw, ['provider', 'name', 'visibility', 'members']);
    // The checks name their field as the InputError's param.
    const provider = checkLabel('provider', str(raw, 'provider', { required: true }));
    const name = checkLabel('name', str(raw, 'name', { required: true }));
    const visibility = checkVisibility(str(raw, 'visibility', { required: true }));
    const m = raw.members ?? [];
    if (!Array.isArray(m)) throw new InputError('must be an array of user externalIds', 'members');
    m.forEach((u, i) => {
      if (typeof u !== 'string' || u.length === 0) throw new InputError('must be a user externalId (a non-empty string)', `members[${i}]`);
    });
    return { provider, name, visibility, members: [...new Set(m as string[])] };
  },
  lookup: (tx, workspaceId, externalIds) => lookupExternalIds(tx, 'channels', workspaceId, externalIds),
  async upsert(ctx, items) {
    const existing = await channelKind.lookup(ctx.tx, ctx.workspaceId, items.map((i) => i.externalId));
    const at = isoNow(ctx.now);
    for (const item of items) {
      const { provider, name, visibility } = item.value;
      let id = existing.get(item.externalId);
      if (id) {
        await ctx.tx.updateTable('channels').set({ provider, name, updated_at: at }).where('id', '=', id).execute();
        await applyVisibility(ctx.tx, id, visibility, at);
      } else {
        id = newId('chn', ctx.now);
        await ctx.tx
          .insertInto('channels')
          .values({ id, workspace_id: ctx.workspaceId, external_id: item.externalId, provider, name, visibility, message_count: 0, created_at: at, updated_at: at })
          .execute();
      }
      ctx.register('channel', item.externalId, id);
    }
  },
  async link(ctx, items) {
    const at = isoNow(ctx.now);
    for (const item of items) {
      const id = await ctx.resolve('channel', item.externalId, { line: item.line, field: 'externalId' });
      const users: string[] = [];
      for (const [i, ext] of item.value.members.entries()) users.push(await ctx.resolve('user', ext, { line: item.line, field: `members[${i}]` }));
      const current = await ctx.tx.selectFrom('channel_members').select('user_id').where('channel_id', '=', id).execute();
      const keep = new Set(users);
      const remove = current.map((r) => r.user_id).filter((u) => !keep.has(u));
      try {
        await replaceMembers(ctx.tx, id, users, remove, at);
      } catch (err) {
        throw new ImportError(item.line, 'members', (err as Error).message);
      }
    }
  },
};
