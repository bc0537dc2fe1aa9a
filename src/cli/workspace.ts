import { systemCtx } from '../lib/context.ts';
import { createWorkspace, listWorkspaces, setDefaultCountry } from '../workspaces/service.ts';
import { countryCode, type Io, onlyOptionsOf, operator, parse, print, printable, required, subcommand, UsageError, withDb, withNewDb } from './io.ts';
import { write } from '../db/index.ts';

export const usage = `rolodex workspace create --name NAME [--json]
rolodex workspace list [--json]
rolodex workspace set --workspace W --default-country CC|none [--json]`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['create', 'list', 'set']);
  const { values } = parse(rest, { name: { type: 'string' }, workspace: { type: 'string' }, 'default-country': { type: 'string' } });
  onlyOptionsOf(usage, sub, values);
  if (sub === 'create') {
    const name = required(values, 'name');
    // The first command of a new installation: it creates the database (docs/cli.md §What creates
    // the database).
    const ws = await withNewDb(io, (db) => createWorkspace(systemCtx(db.kysely), { name }));
    print(io, values.json as boolean, ws, `created workspace ${ws.id} (${printable(ws.name)})`);
  } else if (sub === 'list') {
    const all = await withDb(io, (db) => listWorkspaces(systemCtx(db.kysely)));
    print(io, values.json as boolean, all, all.map((w) => `${w.id}  ${printable(w.name)}`).join('\n') || 'no workspaces');
  } else if (sub === 'set') {
    // The default country of telephone numbers (docs/records.md §Telephone numbers); `none` clears it.
    const workspaceId = required(values, 'workspace');
    const given = required(values, 'default-country');
    if (given !== 'none') countryCode('default-country', given);
    const set = await withDb(io, (db, config) =>
      write(db.kysely, (tx) => setDefaultCountry({ ...operator(db, config, workspaceId), db: tx }, { country: given === 'none' ? null : given })),
    );
    print(io, values.json as boolean, { workspaceId, defaultCountry: set }, `workspace ${workspaceId}: default country ${set ?? 'none'}`);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
