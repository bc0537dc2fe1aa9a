// The `mailbox` import kind (docs/import.md): `user` (externalId), `address`, optional `othersSee`
// (FULL, the default, or METADATA) and `removedAt`. A re-import updates the mailbox: without
// `removedAt` it is live (one that was removed comes back), with it removed, as an export writes a
// removed mailbox (docs/emails.md §Mailboxes).
import { ImportError, type ImportKind, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { checkAddress, checkOthersSee } from './service.ts';
import type { OthersSee } from './tables.ts';

export interface MailboxInput {
  user: string;
  address: string;
  othersSee: OthersSee;
  /** null for a live mailbox. */
  removedAt: string | null;
}

function removedAt(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  // The API's rule (docs/errors.md §Dates): a time zone, and a real date and time.
  const ms = typeof v === 'string' ? parseIsoDateTime(v) : NaN;
  if (Number.isNaN(ms)) throw new InputError('must be an ISO 8601 date-time with a time zone, such as 2026-03-01T12:00:00.000Z', 'removedAt');
  return new Date(ms).toISOString();
}

export const mailboxKind: ImportKind<MailboxInput> = {
  object: 'mailbox',
  check(raw) {
    onlyFields(raw, ['user', 'address', 'othersSee', 'removedAt']);
    return {
      user: str(raw, 'user', { required: true, max: 255 }) as string,
      address: checkAddress(raw.address),
      othersSee: checkOthersSee(raw.othersSee),
      removedAt: removedAt(raw.removedAt),
    };
  },
  lookup: (ctx, externalIds) => repo.mailboxesByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
  references: (_ctx, { value }) => [{ object: 'user', externalId: value.user, field: 'user' }],
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    const taken = (line: number) => new ImportError(line, 'address', 'another mailbox of the workspace has this address');
    await upsertByExternalId(ctx, items, {
      object: 'mailbox',
      idKind: 'mbx',
      find: (externalIds) => mailboxKind.lookup(ctx, externalIds),
      async update({ line, value }, _old, id) {
        const userId = await ctx.resolve('user', value.user, { line, field: 'user' });
        const set = { user_id: userId, address: value.address, others_see: value.othersSee, removed_at: value.removedAt };
        // A line equal to the mailbox writes nothing: its updated_at stays (an export imported
        // again changes nothing, docs/import.md §Rules).
        const stored = await repo.findMailbox(ctx.db, id);
        if (stored && (Object.keys(set) as (keyof typeof set)[]).every((k) => set[k] === stored[k])) return;
        if (!(await repo.updateMailbox(ctx.db, id, { ...set, updated_at: at }))) throw taken(line);
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
          removed_at: value.removedAt,
        };
        if (!(await repo.insertMailbox(ctx.db, row))) throw taken(line);
      },
    });
  },
};
