import { createUser, listUsers } from '../users/service.ts';
import { type Io, oneOf, onlyOptionsOf, operator, parse, print, printable, required, subcommand, UsageError, withDb } from './io.ts';

export const usage = `rolodex user create --workspace W --email E [--name N | --first-name F --last-name L] [--role admin|member] [--profile-image URL] [--json]
rolodex user list --workspace W [--json]`;

const ROLES = ['admin', 'member'] as const;

const displayName = (u: { firstName: string | null; lastName: string | null }) => [u.firstName, u.lastName].filter(Boolean).join(' ');

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['create', 'list']);
  const { values } = parse(rest, {
    workspace: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    'first-name': { type: 'string' },
    'last-name': { type: 'string' },
    role: { type: 'string' },
    'profile-image': { type: 'string' },
  });
  onlyOptionsOf(usage, sub, values);
  const workspaceId = required(values, 'workspace');
  const text = (name: string) => (values[name] as string | undefined) ?? null;
  if (sub === 'create') {
    const email = required(values, 'email');
    if (text('name') !== null && (text('first-name') !== null || text('last-name') !== null)) {
      throw new UsageError('give either --name or --first-name and --last-name, not both', 'name');
    }
    const input = {
      email,
      name: text('name'),
      firstName: text('first-name'),
      lastName: text('last-name'),
      role: oneOf('role', values.role, ROLES) ?? 'member',
      profileImageUrl: text('profile-image'),
    };
    const user = await withDb(io, (db, config) => createUser(operator(db, config, workspaceId), input));
    print(io, values.json as boolean, user, `created user ${user.id} (${printable(user.email)}, ${user.role})`);
  } else if (sub === 'list') {
    const users = await withDb(io, (db, config) => listUsers(operator(db, config, workspaceId)));
    print(
      io,
      values.json as boolean,
      users,
      users.map((u) => `${u.id}  ${printable(u.email)}  ${u.role}  ${printable(displayName(u))}`.trimEnd()).join('\n') || 'no users',
    );
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
