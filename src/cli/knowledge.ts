// `rolodex knowledge list`: what each user's and the workspace's Knowledge holds (files completed
// with a knowledge purpose, docs/design.md §Files). The public API never returns purposes; this is
// where an operator sees their effect.
import { listKnowledge } from '../knowledge/service.ts';
import { findUserRef } from '../users/service.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { type Io, onlyOptionsOf, operator, parse, print, printable, quoted, required, subcommand, UsageError, withDb } from './io.ts';

export const usage = `rolodex knowledge list --workspace W [--user U | --workspace-only] [--json]
  (U: a user's id, externalId or email)`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['list']);
  const { values } = parse(rest, { workspace: { type: 'string' }, user: { type: 'string' }, 'workspace-only': { type: 'boolean' } });
  onlyOptionsOf(usage, sub, values);
  const workspaceId = required(values, 'workspace');
  if (values.user !== undefined && values['workspace-only']) throw new UsageError('--user and --workspace-only exclude each other');
  const items = await withDb(io, async (db, config) => {
    const ctx = operator(db, config, workspaceId);
    await requireWorkspace(ctx);
    // U names a user as every command does, by id, externalId or email; one the workspace lacks is
    // refused, never answered with an empty list.
    const user = typeof values.user === 'string' ? await findUserRef(ctx, { ref: values.user }) : undefined;
    return listKnowledge(ctx, { ...(user ? { userId: user } : {}), ...(values['workspace-only'] ? { owner: 'workspace' as const } : {}) });
  });
  const human = items
    .map(
      (k) =>
        `${k.fileId}  ${k.owner === 'user' ? `user ${k.userId}` : 'workspace'}  ${k.sizeBytes} B  ${printable(k.mimeType)}  ${quoted(k.filename)}  added ${k.addedAt}`,
    )
    .join('\n');
  print(io, values.json as boolean, items, human || 'no knowledge files');
}
