// A temporary directory that outlives neither its user nor a stop by signal. A command's scratch
// files (an import's copy of a piped input, its checked objects, its ids) can hold as much as the
// input itself; a Ctrl-C, SIGTERM or SIGHUP ends the process by the signal's default action, which runs no
// `finally`, so the directories in use are removed from one handler of the signal, which then
// raises it again with the handler gone: the process ends as it would have without it. The
// handler is there only while a directory is.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly dir: string;
  /** Removes the directory and stops watching for signals; once is enough, more is harmless. */
  remove(this: void): Promise<void>;
}

// SIGHUP too: Node sets it back to its default action at start, which `nohup` does not change
// (docs/deploy.md §Start and stop), and that action ends the process as SIGTERM's does.
const STOPS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const inUse = new Set<string>();

function stopped(signal: NodeJS.Signals): void {
  for (const s of STOPS) process.off(s, stopped);
  for (const dir of inUse) rmSync(dir, { recursive: true, force: true });
  inUse.clear();
  process.kill(process.pid, signal);
}

/** Creates a directory under the system's temporary directory, named `prefix` and a random tail. */
export async function tempDir(prefix: string): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (inUse.size === 0) for (const s of STOPS) process.on(s, stopped);
  inUse.add(dir);
  return {
    dir,
    remove: async () => {
      if (inUse.delete(dir) && inUse.size === 0) for (const s of STOPS) process.off(s, stopped);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
