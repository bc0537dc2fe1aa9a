// `mkdir -p` that ends. Node's own recursive mkdir loops forever where creating a directory fails
// with ENOENT although its parent exists, as it does anywhere under /proc: it takes the ENOENT
// for a missing parent, creates the parent (EEXIST) and tries again. A DATA_DIR, a backup or an
// export directory given there hung the command without a word. Here the missing directories are
// found first, walking up to the first that exists, then created outermost first, each once: any
// failure is the error of the directory that could not be made.
import { mkdirSync, statSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** Whether `p` is a directory (false when nothing is there); a file in the way is an error. */
function isDirectory(stats: { isDirectory(): boolean } | undefined, p: string): boolean {
  if (stats === undefined) return false;
  if (stats.isDirectory()) return true;
  throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${p}'`), { code: 'ENOTDIR', path: p });
}

function absent(err: NodeJS.ErrnoException): undefined {
  if (err.code === 'ENOENT') return undefined;
  throw err;
}

/** Another process may create a directory between the walk and the mkdir: that is no failure. */
function alreadyMade(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
}

/** Creates `path` and its missing parents (each with `mode`); the outermost one created, or undefined when it existed. */
export async function makeDirectory(path: string, mode?: number): Promise<string | undefined> {
  const todo: string[] = [];
  for (let p = resolve(path); !isDirectory(await stat(p).catch(absent), p); p = dirname(p)) {
    todo.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const dir of todo) await mkdir(dir, { mode }).catch(alreadyMade);
  return todo[0];
}

/** makeDirectory, synchronous: for the configuration, read before anything runs. */
export function makeDirectorySync(path: string, mode?: number): string | undefined {
  const todo: string[] = [];
  for (let p = resolve(path); !isDirectory(statSync(p, { throwIfNoEntry: false }), p); p = dirname(p)) {
    todo.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const dir of todo) {
    try {
      mkdirSync(dir, { mode });
    } catch (err) {
      alreadyMade(err);
    }
  }
  return todo[0];
}

/**
 * Makes `path` its owner's alone: a file 0600, a directory 0700 and everything in it likewise
 * (what a copy brought with its source's modes). A symbolic link is left as it is.
 */
export async function keepToOwner(path: string): Promise<void> {
  const stats = await lstat(path);
  if (stats.isSymbolicLink()) return;
  await chmod(path, stats.isDirectory() ? 0o700 : 0o600);
  if (stats.isDirectory()) for (const name of await readdir(path)) await keepToOwner(join(path, name));
}
