// A temporary directory that outlives neither its user nor a stop by signal. A command's scratch
// files (an import's copy of a piped input, its checked objects, its ids) can hold as much as the
// input itself; a Ctrl-C or SIGTERM ends the process by the signal's default action, which runs no
// `finally`, so each such directory is removed from the signal's handler, and the signal is then
// raised again with the handler gone: the process ends as it would have without it.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly dir: string;
  /** Removes the directory and stops watching for signals; once is enough, more is harmless. */
  remove(this: void): Promise<void>;
}

// SIGHUP keeps its default: a handler would undo `nohup` (docs/deploy.md §Start and stop).
const STOPS = ['SIGINT', 'SIGTERM'] as const;

/** Creates a directory under the system's temporary directory, named `prefix` and a random tail. */
export async function tempDir(prefix: string): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const stopped = (signal: NodeJS.Signals) => {
    unwatch();
    rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  const unwatch = () => {
    for (const s of STOPS) process.off(s, stopped);
  };
  for (const s of STOPS) process.on(s, stopped);
  return {
    dir,
    remove: async () => {
      unwatch();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
