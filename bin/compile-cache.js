// Node's compile cache, filled for this checkout before a command runs (docs/deploy.md §Start and
// stop, The compile cache). A process that loads a module the cache does not hold loads Node's
// TypeScript stripper and holds it to its end, in each thread that did. So when the cache does
// not hold this checkout's stamp (Node's version, and each file of src/ by path, size and time of
// change), a process of its own loads every module of src/ into it and exits, and only then does
// the command load what it uses. No module of src/ does work when imported (thread entries run
// only as entries), so loading them all is safe.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, globSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** The stamp is an empty file in the cache's directory, named by it. */
const PREFIX = 'rolodex-filled-';
/** A fill that takes longer is given up: the command then compiles what it loads itself. */
const FILL_TIMEOUT_MS = 120_000;

const sources = () => globSync('**/*.ts', { cwd: SRC }).sort();

/**
 * The stamp's files of this checkout and one set of V8 flags (they key the cache's entries too)
 * start so. A fill removes the older stamps of its own prefix only: another checkout sharing the
 * cache (a second release beside this one) keeps its stamp, and its entries, keyed by path, stay
 * valid, so neither fills again at each start of the other.
 */
const prefix = (flags) =>
  PREFIX +
  createHash('sha256')
    .update(`${SRC}\0${flags.join(' ')}`)
    .digest('hex')
    .slice(0, 8) +
  '-';

function stamp(files, flags) {
  const hash = createHash('sha256').update(`${process.version} ${process.arch}`);
  for (const file of files) {
    const s = statSync(join(SRC, file));
    hash.update(`\0${file}\0${s.size}\0${s.mtimeMs}`);
  }
  return prefix(flags) + hash.digest('hex').slice(0, 32);
}

/**
 * Fills `directory`, the compile cache's directory (NODE_COMPILE_CACHE), with every module of src/
 * as a process started with `flags` compiles them (V8's flags key the entries), unless it holds
 * this checkout's stamp for them already. A module is kept once as `import` loads it and once as
 * `require` does (the database layer requires PostgreSQL's files, to open a database without
 * waiting): Node keeps the two apart, so each is filled by a process of its own, side by side.
 * Never fails the command: a cache that cannot be filled or stamped (a read-only directory, say)
 * leaves the command to compile what it loads.
 */
export async function fillCompileCache(directory, flags = []) {
  try {
    const mark = stamp(sources(), flags);
    if (existsSync(join(directory, mark))) return;
    const env = { ...process.env, NODE_COMPILE_CACHE: directory };
    const fill = (how) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [...flags, fileURLToPath(import.meta.url), how], { stdio: 'ignore', env, timeout: FILL_TIMEOUT_MS });
        child.on('error', () => resolve(false)).on('exit', (code) => resolve(code === 0));
      });
    if (!(await Promise.all([fill('import'), fill('require')])).every(Boolean)) return;
    for (const old of readdirSync(directory)) if (old.startsWith(prefix(flags))) rmSync(join(directory, old), { force: true });
    writeFileSync(join(directory, mark), '');
  } catch {
    // As above: the command runs whatever the cache holds.
  }
}

// A fill's own process: loads every module as `import` or as `require` does (one that fails to
// load is left out; `require` cannot load a module that awaits at its top), writes the cache and
// exits, whatever a module may have left waiting.
if (import.meta.main) {
  module.enableCompileCache();
  const require = module.createRequire(import.meta.url);
  for (const file of sources()) {
    const path = join(SRC, file);
    if (process.argv[2] === 'require') {
      try {
        require(path);
      } catch {
        // Left out, as above.
      }
    } else await import(pathToFileURL(path).href).catch(() => undefined);
  }
  module.flushCompileCache();
  process.exit(0);
}
