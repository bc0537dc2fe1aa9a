// A command interrupted while it writes (Ctrl-C's SIGINT, SIGTERM from `timeout` or systemd, SIGHUP
// of a closed terminal): `backup`, `restore` and `export` remove what they have written so far, as
// they do when they fail, say so in one line on stderr, and then end by the signal, as they would
// have without the handler (a shell sees 130 for SIGINT), so that a script running them stops too
// (docs/cli.md §The operator CLI; src/lib/temp-dir.ts does the same for scratch directories), so
// no backup directory is left without its manifest, nor a restore's half-copied blobs.
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
  for (const s of SIGNALS) process.off(s, interrupted);
  // Synchronous: the work still running (a copy on libuv's threads) ends with the process, and
  // nothing of the command's runs between the removal and the end. A copy that creates a file
  // while a directory is removed fails that removal with ENOTEMPTY, which a retry mends.
  for (const undo of undos)
    for (const path of undo.written()) {
      try {
        rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      } catch {
        // What cannot be removed stays; the line below is still told.
      }
    }
  undos.clear();
  if (first) process.stderr.write(errorLines([`rolodex ${first.command}: ${first.line(signal)}`]) + '\n');
  process.kill(process.pid, signal);
}

/**
 * Runs `work`; a signal meanwhile removes what `undo.written()` names, tells `undo.line` and ends
 * the process by that signal. Outside `work` the signals act as before.
 */
export async function undoneIfInterrupted<T>(undo: Undo, work: () => Promise<T>): Promise<T> {
  if (undos.size === 0) for (const signal of SIGNALS) process.on(signal, interrupted);
  undos.add(undo);
  try {
    return await work();
  } finally {
    if (undos.delete(undo) && undos.size === 0) for (const signal of SIGNALS) process.off(signal, interrupted);
  }
}
