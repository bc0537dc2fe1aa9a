// The `channel` import kind (docs/design.md §Import format): provider, name, visibility and members
// (user externalIds). Re-importing a channel replaces its members with the listed ones.
import { type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { checkLabel, checkVisibility } from './service.ts';
import type { Visibility } from './tables.ts';

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
  lookup: (ctx, externalIds) => repo.channelsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
  references: (_ctx, { value }) => value.members.map((externalId, i) => ({ object: 'user', externalId, field: `members[${i}]` })),
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    await upsertByExternalId(ctx, items, {
      object: 'channel',
      idKind: 'chn',
      find: (externalIds) => channelKind.lookup(ctx, externalIds),
      // Only a change moves updated_at (docs/messages.md §Channels): a line equal to the channel writes nothing.
      async update({ value: { provider, name, visibility } }, _old, id) {
        const stored = await repo.findChannel(ctx.db, id);
        if (stored.provider !== provider || stored.name !== name) await repo.updateChannel(ctx.db, id, { provider, name, updated_at: at });
        await repo.setVisibility(ctx.db, id, visibility, at);
      },
      async insert({ line, externalId, value: { provider, name, visibility } }, id) {
        const row = {
          id,
          workspace_id: ctx.actor.workspaceId,
          external_id: externalId,
          provider,
          name,
          visibility,
          message_count: 0,
          created_at: at,
          updated_at: at,
        };
        // Only a channel created meanwhile (by the CLI) can hold the externalId the look-up found free.
        if (!(await repo.insertChannel(ctx.db, row))) throw new ImportError(line, 'externalId', 'another channel of the workspace has this externalId');
      },
    });
  },
  async link(ctx, items) {
    const at = isoNow(ctx.now);
    for (const item of items) {
      const id = await ctx.resolve('channel', item.externalId, { line: item.line, field: 'externalId' });
      // Looked up together, as a list's members are: a channel may have tens of thousands.
      const found = await ctx.resolveAll('user', item.value.members);
      const users = item.value.members.map((ext, i) => {
        const user = found.get(ext);
        if (user === undefined) throw new ImportError(item.line, `members[${i}]`, `no user with externalId "${ext}" in this import or the workspace`);
        return user;
      });
      const keep = new Set(users);
      const remove = (await repo.memberIds(ctx.db, id)).filter((u) => !keep.has(u));
      try {
        await repo.changeMembers(ctx.db, id, users, remove, at);
      } catch (err) {
        throw new ImportError(item.line, 'members', (err as Error).message);
      }
    }
  },
};
