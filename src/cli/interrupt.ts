// A command interrupted while it writes (Ctrl-C's SIGINT, SIGTERM from `timeout` or systemd, SIGHUP
// of a closed terminal): `backup`, `restore` and `export` remove what they have written so far, as
// they do when they fail, and stop with one line on stderr and exit code 1 (docs/cli.md §The
// operator CLI). Without this the signal ended the process where it stood: a backup directory
// without its manifest, a restore's half-copied blobs that refused the restore run again.
import { rmSync } from 'node:fs';
import { errorLines } from './io.ts';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

interface Undo {
  command: string;
  /** The line told, after `rolodex COMMAND: `. */
  line: (signal: NodeJS.Signals) => string;
  /** What the command has written so far, removed whole. */
  written: () => readonly string[];
}

const undos = new Set<Undo>();

function interrupted(signal: NodeJS.Signals): void {
  const first = [...undos][0];
  // Synchronous: the work still running (a copy on libuv's threads) ends with the process, and
  // nothing of the command's runs between the removal and the exit. A copy that creates a file
  // while a directory is removed fails that removal with ENOTEMPTY, which a retry mends.
  for (const undo of undos)
    for (const path of undo.written()) {
      try {
        rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      } catch {
        // What cannot be removed stays; the line below is still told.
      }
    }
  if (first) process.stderr.write(errorLines([`rolodex ${first.command}: ${first.line(signal)}`]) + '\n');
  process.exit(1);
}

/**
 * Runs `work`; a signal meanwhile removes what `undo.written()` names and ends the process with
 * `undo.line` and exit code 1. Outside `work` the signals act as before.
 */
export async function undoneIfInterrupted<T>(undo: Undo, work: () => Promise<T>): Promise<T> {
  if (undos.size === 0) for (const signal of SIGNALS) process.on(signal, interrupted);
  undos.add(undo);
  try {
    return await work();
  } finally {
    undos.delete(undo);
    if (undos.size === 0) for (const signal of SIGNALS) process.off(signal, interrupted);
  }
}
