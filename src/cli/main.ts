// `rolodex <command>`: the operator CLI. Exit codes: 0 done, 1 refused or failed, 2 wrong usage.
import { enableCompileCache } from 'node:module';
import { watchParent } from '../lifecycle.ts';
import { InputError } from '../lib/errors.ts';
import { errorLines, type Io, lineByLine, processIo, Report, UsageError } from './io.ts';
import { version } from './version.ts';

interface Command {
  usage: string;
  run(args: string[], io: Io): Promise<void>;
}

// Each command is loaded when it runs: `serve` then holds in memory only what the server uses, and
// `--version` or a port in use answers without loading the rest.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: () => import('./serve.ts'),
  migrate: () => import('./migrate.ts'),
  workspace: () => import('./workspace.ts'),
  user: () => import('./user.ts'),
  key: () => import('./key.ts'),
  import: () => import('./import.ts'),
  export: () => import('./export.ts'),
  trash: () => import('./trash.ts'),
  webhook: () => import('./webhook.ts'),
  channel: () => import('./channel.ts'),
  definition: () => import('./definition.ts'),
  demo: () => import('./demo.ts'),
  knowledge: () => import('./knowledge.ts'),
  mailbox: () => import('./mailbox.ts'),
  backup: () => import('./backup.ts'),
  restore: async () => (await import('./backup.ts')).restore,
};

async function help(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  return `usage:\n${commands
    .map((c) => c.usage.replace(/^/gm, '  '))
    .join('\n')}\n  rolodex --version\n\nEvery command reads the server's configuration (DATA_DIR, DATABASE_URL, …); --json prints only JSON.`;
}

/** src/db/migrate.ts's MigrationError and the blob stores' faults (src/blobs/blob-store.ts). */
const OPERATOR_ERRORS = new Set(['MigrationError', 'BlobStoreUnavailableError', 'BlobStoreMisconfiguredError', 'BlobDiskFaultError']);

export async function main(argv: string[], given: Io = processIo): Promise<number> {
  // Each line of an error is one line on stderr whatever it quotes; the CLI's own text (a usage)
  // follows as it is (docs/cli.md §The operator CLI).
  const tell = (lines: string[], own?: string) => given.err(own === undefined ? errorLines(lines) : `${errorLines(lines)}\n${own}`);
  const io = lineByLine(given);
  const [name, ...args] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    // It takes no argument: one more is wrong usage, as with every command, never ignored.
    if (args.length > 0) {
      tell([`rolodex ${name}: unexpected argument "${args[0]}"`], 'usage:\n  rolodex --version');
      return 2;
    }
    io.out(`rolodex ${version()} (Node.js ${process.versions.node})`);
    return 0;
  }
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.out(await help());
    return name ? 0 : 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? await COMMANDS[name]!() : undefined;
  if (!command) {
    tell([`rolodex: unknown command "${name}"`], await help());
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
      tell([`rolodex ${name}: ${err.message}`], `usage:\n${command.usage}`);
      return 2;
    }
    if (err instanceof Report) {
      const [head, ...rest] = err.lines;
      tell([`rolodex ${name}: ${head ?? ''}`, ...rest]);
      return 1;
    }
    // Errors that already say what to mend, in one line: told by their names, since importing their
    // modules would load every migration or the blob stores (docs/reliability.md §Blob store).
    if (err instanceof InputError || OPERATOR_ERRORS.has((err as Error | undefined)?.name ?? '')) {
      tell([`rolodex ${name}: ${(err as Error).message}`]);
      return 1;
    }
    // The error in one line, then the frames of its stack, a line each.
    const stack = (err as Error | undefined)?.stack ?? '';
    const frames = stack.search(/\n\s+at /);
    tell([`rolodex ${name}: unexpected error: ${String(err)}`, ...(frames >= 0 ? stack.slice(frames + 1).split('\n') : [])]);
    return 1;
  }
}

/**
 * V8 flags a command's process runs under. `import`: a young generation of 2 × 4 MB (V8 sizes it
 * by the machine's memory, up to 2 × 64 MB) and an old generation allowed to grow by 30% of what
 * survived the last full collection (by up to four times otherwise), so that the heap stays near
 * what the import holds, whatever the machine (docs/import.md §Memory).
 */
export const NODE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  import: ['--max-semi-space-size=4', '--heap-growing-percent=30'],
};

/**
 * glibc's malloc arenas a command's process may use, at most. `import`: two, the main thread's and
 * one that the others share (the writer thread, libuv's, V8's and SQLite's helpers), where glibc
 * would give each thread an arena of its own, up to eight per processor, each keeping the memory
 * its thread freed for that thread (docs/import.md §Memory). MALLOC_ARENA_MAX, when set, wins.
 */
export const MALLOC_ARENAS: Readonly<Record<string, number>> = { import: 2 };

/** The CLI as a process (bin/rolodex.js, `node src/cli/main.ts`): it stops with the wrapper that started it. */
export async function runProcess(argv: string[]): Promise<number> {
  const flags = NODE_FLAGS[argv[0] ?? ''];
  // Heap sizes are set when Node starts, and malloc's arenas when the process does: the process
  // becomes Node started with them (MALLOC_ARENAS in its environment), under the same id,
  // descriptors and otherwise the same environment (where process.execve exists: not on
  // Windows). It starts with Node's compile cache on, whichever entry started this one
  // (bin/rolodex.js turns it on, `node src/cli/main.ts` does not), filled first for those flags,
  // which key its entries (bin/compile-cache.js): neither it nor its threads load Node's
  // TypeScript stripper, which each would hold to its end (docs/import.md §Memory). The
  // directory named is the one set in the environment, if any: `directory` is then this Node's
  // and flags' subdirectory, in which Node would nest a new cache.
  if (flags && process.execve && process.argv[1] && !flags.every((f) => process.execArgv.includes(f))) {
    const cache = enableCompileCache();
    const directory = cache.directory && (process.env.NODE_COMPILE_CACHE || cache.directory);
    if (directory) await (await import('../../bin/compile-cache.js')).fillCompileCache(directory, [...flags, ...process.execArgv]);
    const arenas = MALLOC_ARENAS[argv[0]!];
    const env = {
      ...process.env,
      ...(directory ? { NODE_COMPILE_CACHE: directory } : {}),
      ...(arenas !== undefined && process.env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: String(arenas) } : {}),
    };
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, process.argv[1], ...argv], env);
  }
  watchParent(process.env);
  // stdout that cannot be written (a full disk; a reader gone, as `| head`) is one line and exit
  // code 1, never an unhandled 'error' event; a command that reported it itself is left alone.
  // `serve` returns once it listens, and its stdout is then left as it was.
  let stdoutFailed: Error | undefined;
  const failed = (err: Error) => (stdoutFailed ??= err);
  process.stdout.on('error', failed);
  const code = await main(argv);
  // The last write's error is emitted after it: an empty write's callback comes after it.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.stdout.off('error', failed);
  if (stdoutFailed === undefined || code !== 0) return code;
  lineByLine(processIo).err(`rolodex ${argv[0] ?? ''}: cannot write stdout: ${stdoutFailed.message}`);
  return 1;
}

// Run only when executed directly, not when imported by tests.
if (import.meta.main) process.exitCode = await runProcess(process.argv.slice(2));
