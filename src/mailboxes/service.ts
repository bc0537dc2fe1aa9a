// Mailboxes (docs/emails.md §Mailboxes): each belongs to one user, who sends from it and reads its
// mail at FULL; everyone else reads that mail at the mailbox's `othersSee` level. Operators manage
// them with the CLI and the import; no public endpoint changes them, and nothing about them is
// cached, so a change applies to the very next request.
import type { Ctx, SystemCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { checkExternalId } from '../import/kind.ts';
import { findUserRef } from '../users/service.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import * as repo from './repository.ts';
import type { OthersSee } from './tables.ts';
import { longerThan } from '../lib/chars.ts';

export const OTHERS_SEE: readonly OthersSee[] = ['FULL', 'METADATA'];

// A bare address: no display name, no spaces; the same rule as the API's `format: email`.
const ADDRESS = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** A bare e-mail address, lower-cased; the InputError names `param`. */
export function checkAddress(v: unknown, param = 'address'): string {
  if (typeof v !== 'string' || longerThan(v, 320) || !ADDRESS.test(v)) throw new InputError('must be a bare e-mail address such as ann@example.com', param);
  return v.toLowerCase();
}

export function checkOthersSee(v: unknown, param = 'othersSee'): OthersSee {
  if (v === undefined || v === null) return 'FULL';
  if (typeof v !== 'string' || !(OTHERS_SEE as readonly string[]).includes(v)) throw new InputError(`must be ${OTHERS_SEE.join(' or ')}`, param);
  return v as OthersSee;
}

export function toResource(r: repo.MailboxRow) {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    address: r.address,
    othersSee: r.others_see,
    externalId: r.external_id,
    createdAt: r.created_at,
    removedAt: r.removed_at,
  };
}

export interface AddMailboxInput {
  /** A user of the workspace: id, externalId or email. */
  user: string;
  address: string;
  othersSee?: string | undefined;
  externalId?: string | null;
}

export async function addMailbox(ctx: Ctx, input: AddMailboxInput) {
  await requireWorkspace(ctx);
  const address = checkAddress(input.address);
  const othersSee = checkOthersSee(input.othersSee, 'others-see');
  const userId = await findUserRef(ctx, { ref: input.user });
  const at = isoNow(ctx.now);
  const row: repo.MailboxRow = {
    id: newId('mbx', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    user_id: userId,
    address,
    others_see: othersSee,
    external_id: input.externalId == null ? null : checkExternalId(input.externalId, '--external-id', { named: true }),
    created_at: at,
    updated_at: at,
    removed_at: null,
  };
  if (!(await repo.insertMailbox(ctx.db, row))) throw new InputError('a mailbox of this workspace has this address (or the externalId) already', 'address');
  return toResource(row);
}

export async function listMailboxes(ctx: Ctx) {
  await requireWorkspace(ctx);
  return (await repo.listMailboxes(ctx.db, ctx.actor.workspaceId)).map(toResource);
}

/**
 * Stops sending from it; its mail stays, read as before. Its queued mail is left to the dispatcher,
 * which fails it instead of sending it (docs/emails.md §Delivery).
 */
export async function removeMailbox(ctx: SystemCtx, input: { id: string }) {
  const row = await repo.findMailbox(ctx.db, input.id);
  if (!row) throw new InputError(`no mailbox with id "${input.id}"`, 'id');
  // A removed mailbox stays (its mail names it, an export writes it): removing it again is refused as such.
  if (row.removed_at !== null) throw new InputError(`mailbox "${row.id}" is removed already (since ${row.removed_at})`, 'id');
  const at = isoNow(ctx.now);
  await repo.markRemoved(ctx.db, row.id, at);
  return toResource({ ...row, removed_at: at, updated_at: at });
}
