// `rolodex mailbox …`: the mailboxes e-mail is sent from and read through (docs/emails.md
// §Mailboxes). Changes apply to the very next API request.
import { systemCtx } from '../lib/context.ts';
import { addMailbox, listMailboxes, OTHERS_SEE, removeMailbox } from '../mailboxes/service.ts';
import { type Io, oneOf, onlyOptionsOf, operator, parse, print, printable, required, subcommand, takes, UsageError, withDb } from './io.ts';

export const usage = `rolodex mailbox add --workspace W --user U --address A [--others-see ${OTHERS_SEE.join('|')}] [--external-id X] [--json]
rolodex mailbox list --workspace W [--json]
rolodex mailbox remove MAILBOX_ID [--json]
  (U: a user's id, externalId or email; others-see: what other users and workspace keys read of its mail, FULL by default)`;

type Described = Awaited<ReturnType<typeof addMailbox>>;

const line = (m: Described) =>
  `${m.id}  ${printable(m.address)}  owner ${m.userId}  others see ${m.othersSee}${m.externalId ? `  (${printable(m.externalId)})` : ''}`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['add', 'list', 'remove']);
  const { values, positionals } = parse(
    rest,
    {
      workspace: { type: 'string' },
      user: { type: 'string' },
      address: { type: 'string' },
      'others-see': { type: 'string' },
      'external-id': { type: 'string' },
    },
    takes(sub, { add: 0, list: 0, remove: 1 }),
  );
  onlyOptionsOf(usage, sub, values);
  const json = values.json as boolean | undefined;
  if (sub === 'add') {
    const workspaceId = required(values, 'workspace');
    const input = {
      user: required(values, 'user'),
      address: required(values, 'address'),
      othersSee: oneOf('others-see', values['others-see'], OTHERS_SEE),
      externalId: (values['external-id'] as string | undefined) ?? null,
    };
    const m = await withDb(io, (db, config) => addMailbox(operator(db, config, workspaceId), input));
    print(io, json, m, `added mailbox ${line(m)}`);
  } else if (sub === 'list') {
    const workspaceId = required(values, 'workspace');
    const all = await withDb(io, (db, config) => listMailboxes(operator(db, config, workspaceId)));
    print(io, json, all, all.map(line).join('\n') || 'no mailboxes');
  } else if (sub === 'remove') {
    const id = positionals[0];
    if (!id) throw new UsageError('the id of the mailbox to remove is required');
    const m = await withDb(io, (db) => removeMailbox(systemCtx(db.kysely), { id }));
    print(io, json, m, `removed mailbox ${m.id} (${printable(m.address)}); its e-mails stay`);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
