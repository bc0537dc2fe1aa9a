// Temp files that a killed process left behind (a put that never reached its rename) are
// invisible to readers but take disk space; a sweep deletes those untouched for long enough.
import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Deletes files under `dir` whose name matches `pattern` and that were last written before `before`. */
export async function removeStaleFiles(dir: string, pattern: RegExp, before: number, recursive: boolean): Promise<number> {
  let removed = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0; // nothing written yet, or gone meanwhile
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && recursive) removed += await removeStaleFiles(p, pattern, before, true);
    else if (e.isFile() && pattern.test(e.name)) {
      const s = await stat(p).catch(() => null);
      if (
        s &&
        s.mtimeMs < before &&
        (await unlink(p).then(
          () => true,
          () => false,
        ))
      )
        removed++;
    }
  }
  return removed;
}
