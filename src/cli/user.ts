import { createUser, listUsers } from '../users/service.ts';
import { type Io, operator, parse, print, required, UsageError, withDb } from './io.ts';

export const usage = `rolodex user create --workspace W --email E [--name N] [--role admin|member] [--json]
rolodex user list --workspace W [--json]`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, { workspace: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } });
  const workspaceId = required(values, 'workspace');
  if (sub === 'create') {
    const email = required(values, 'email');
    const user = await withDb(io, (db, config) =>
      createUser(operator(db, config, workspaceId), { email, name: (values.name as string) ?? null, role: (values.role as string) ?? 'member' }),
    );
    print(io, values.json as boolean, user, `created user ${user.id} (${user.email}, ${user.role})`);
  } else if (sub === 'list') {
    const users = await withDb(io, (db, config) => listUsers(operator(db, config, workspaceId)));
    print(io, values.json as boolean, users, users.map((u) => `${u.id}  ${u.email}  ${u.role}`).join('\n') || 'no users');
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
