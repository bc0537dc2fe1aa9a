// `rolodex channel …`: channels and their members after import (docs/design.md §Message visibility,
// §Operator CLI). Changes apply to the very next API request; nothing about visibility is cached.
import { changeMembers, createChannel, listChannels, setVisibility, VISIBILITIES } from '../channels/service.ts';
import { countOf, type Io, printable, oneOf, onlyOptionsOf, operator, parse, print, required, subcommand, takes, UsageError, withDb } from './io.ts';
import { write } from '../db/index.ts';

export const usage = `rolodex channel create --workspace W --provider P --name N --visibility ${VISIBILITIES.join('|')} [--external-id X] [--json]
rolodex channel list --workspace W [--json]
rolodex channel visibility --workspace W CHANNEL ${VISIBILITIES.join('|')} [--json]
rolodex channel add-members --workspace W CHANNEL USER... [--json]
rolodex channel remove-members --workspace W CHANNEL USER... [--json]
  (CHANNEL: id or externalId; USER: id, externalId or email)`;

type Described = Awaited<ReturnType<typeof createChannel>>;

const line = (c: Described) =>
  `${c.id}  ${c.visibility.padEnd(10)} ${printable(`${c.provider}/${c.name}`)}  ${countOf(c.members, 'member')}, ${countOf(c.messages, 'message')}${c.externalId ? `  (${printable(c.externalId)})` : ''}`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['create', 'list', 'visibility', 'add-members', 'remove-members']);
  const { values, positionals } = parse(
    rest,
    {
      workspace: { type: 'string' },
      provider: { type: 'string' },
      name: { type: 'string' },
      visibility: { type: 'string' },
      'external-id': { type: 'string' },
    },
    takes(sub, { create: 0, list: 0, visibility: 2, 'add-members': Infinity, 'remove-members': Infinity }),
  );
  onlyOptionsOf(usage, sub, values);
  const json = values.json as boolean | undefined;
  const workspaceId = required(values, 'workspace');
  const [channel, ...more] = positionals;
  const needChannel = (): string => {
    if (!channel) throw new UsageError('the channel (id or externalId) is required');
    return channel;
  };
  if (sub === 'create') {
    // Checked before the database is opened: a wrong value is wrong usage, nothing done.
    const input = {
      provider: required(values, 'provider'),
      name: required(values, 'name'),
      visibility: oneOf('visibility', required(values, 'visibility'), VISIBILITIES) as string,
      externalId: (values['external-id'] as string | undefined) ?? null,
    };
    const c = await withDb(io, (db, config) => createChannel(operator(db, config, workspaceId), input));
    print(io, json, c, `created channel ${line(c)}`);
  } else if (sub === 'list') {
    const all = await withDb(io, (db, config) => listChannels(operator(db, config, workspaceId)));
    print(io, json, all, all.map(line).join('\n') || 'no channels');
  } else if (sub === 'visibility') {
    const ref = needChannel();
    const v = more[0];
    if (!v) throw new UsageError(`the new visibility (${VISIBILITIES.join(', ')}) is required`);
    if (!(VISIBILITIES as readonly string[]).includes(v)) throw new UsageError(`VISIBILITY must be one of ${VISIBILITIES.join(', ')} (got "${v}")`);
    const c = await withDb(io, (db, config) =>
      write(db.kysely, (tx) => setVisibility({ ...operator(db, config, workspaceId), db: tx }, { channel: ref, visibility: v })),
    );
    print(io, json, c, `channel ${line(c)}`);
  } else if (sub === 'add-members' || sub === 'remove-members') {
    const ref = needChannel();
    if (more.length === 0) throw new UsageError('at least one user (id, externalId or email) is required');
    const change = sub === 'add-members' ? { add: more } : { remove: more };
    const c = await withDb(io, (db, config) =>
      write(db.kysely, (tx) => changeMembers({ ...operator(db, config, workspaceId), db: tx }, { channel: ref, ...change })),
    );
    print(io, json, c, `channel ${line(c)}`);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
