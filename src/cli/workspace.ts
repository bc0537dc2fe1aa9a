import { systemCtx } from '../lib/context.ts';
import { createWorkspace, listWorkspaces } from '../workspaces/service.ts';
import { type Io, parse, print, required, UsageError, withDb } from './io.ts';

export const usage = `rolodex workspace create --name NAME [--json]
rolodex workspace list [--json]`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, { name: { type: 'string' } });
  if (sub === 'create') {
    const name = required(values, 'name');
    const ws = await withDb(io, (db) => createWorkspace(systemCtx(db.kysely), { name }));
    print(io, values.json as boolean, ws, `created workspace ${ws.id} (${ws.name})`);
  } else if (sub === 'list') {
    const all = await withDb(io, (db) => listWorkspaces(systemCtx(db.kysely)));
    print(io, values.json as boolean, all, all.map((w) => `${w.id}  ${w.name}`).join('\n') || 'no workspaces');
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
