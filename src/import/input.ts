// The file `rolodex import` reads (docs/import.md §Format). Its readers open it again and read it
// at offsets: the first character tells NDJSON from a JSON array, a CSV header's separators and
// the place of a byte that is not UTF-8 are read from the start. A pipe (`<(zcat x.gz)`,
// `/dev/stdin`) or a device allows neither, so such an input is first copied, as it is, into a
// temporary file readable by its owner only, which the import reads and removes when it ends.
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { tempDir } from '../lib/temp-dir.ts';

export interface ImportInput {
  /** A regular file holding the input's bytes. */
  path: string;
  /** Removes the copy, if one was made. */
  remove(): Promise<void>;
}

export async function regularInput(path: string): Promise<ImportInput> {
  if ((await stat(path)).isFile()) return { path, remove: async () => {} };
  // The copy holds the whole input: an import stopped by Ctrl-C or SIGTERM removes it too.
  const { dir, remove } = await tempDir('rolodex-input-');
  try {
    const copy = join(dir, 'input');
    await pipeline(createReadStream(path), createWriteStream(copy, { mode: 0o600 }));
    return { path: copy, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}
