// `rolodex <command>`: the operator CLI. Exit codes: 0 done, 1 refused or failed, 2 wrong usage.
import { MigrationError } from '../db/migrate.ts';
import { InputError } from '../lib/errors.ts';
import { type Io, processIo, UsageError } from './io.ts';
import * as channel from './channel.ts';
import * as definition from './definition.ts';
import * as demo from './demo.ts';
import * as importCmd from './import.ts';
import * as key from './key.ts';
import * as knowledge from './knowledge.ts';
import * as mailbox from './mailbox.ts';
import * as migrate from './migrate.ts';
import * as serve from './serve.ts';
import * as user from './user.ts';
import * as webhook from './webhook.ts';
import * as workspace from './workspace.ts';

interface Command {
  usage: string;
  run(args: string[], io: Io): Promise<void>;
}

const COMMANDS: Record<string, Command> = {
  serve,
  migrate,
  workspace,
  user,
  key,
  import: importCmd,
  channel,
  definition,
  demo,
  knowledge,
  mailbox,
  webhook,
};

function help(): string {
  return `usage:\n${Object.values(COMMANDS)
    .map((c) => c.usage.replace(/^/gm, '  '))
    .join('\n')}\n\nEvery command reads the server's configuration (DATA_DIR, DATABASE_URL, …); --json prints only JSON.`;
}

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.out(help());
    return name ? 0 : 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`rolodex: unknown command "${name}"\n${help()}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(command.usage);
    return 0;
  }
  try {
    await command.run(args, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`rolodex ${name}: ${err.message}\nusage:\n${command.usage}`);
      return 2;
    }
    if (err instanceof InputError || err instanceof MigrationError) {
      io.err(`rolodex ${name}: ${err.message}`);
      return 1;
    }
    io.err(`rolodex ${name}: unexpected error: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}

// Run only when executed directly (bin/rolodex.js or `node src/cli/main.ts`), not when imported by tests.
if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
