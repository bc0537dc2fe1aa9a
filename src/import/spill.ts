// The checked objects of an import, kept on disk by kind between the check and the writes
// (docs/import.md §Memory): one temporary NDJSON file per kind, `line<TAB>json` a line, read back
// kind by kind in dependency order. The directory is removed when the import ends, also when the
// check fails while a file's write is still under way: a file's error is kept and thrown by the
// next `add` or by `finish`, never left unhandled, so a failed import reports its bad lines
// instead of crashing.
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { join } from 'node:path';
import { tempDir, type TempDir } from '../lib/temp-dir.ts';
import { linesOf } from './lines.ts';

export class Spill {
  /** The directory of this import's files. */
  readonly dir: string;
  readonly #temp: TempDir;
  private readonly files = new Map<string, WriteStream>();
  private failure: Error | undefined;

  private constructor(temp: TempDir) {
    this.#temp = temp;
    this.dir = temp.dir;
  }

  /** Removed also when a signal stops the import (src/lib/temp-dir.ts). */
  static async open(): Promise<Spill> {
    return new Spill(await tempDir('rolodex-import-'));
  }

  private path(object: string): string {
    return join(this.dir, `${encodeURIComponent(object)}.ndjson`);
  }

  async add(object: string, line: number, raw: unknown): Promise<void> {
    if (this.failure) throw this.failure;
    let out = this.files.get(object);
    if (!out) {
      out = createWriteStream(this.path(object));
      out.on('error', (err) => (this.failure ??= err));
      this.files.set(object, out);
    }
    if (!out.write(`${line}\t${JSON.stringify(raw)}\n`)) await once(out, 'drain');
  }

  /** Flushes every file; reads may start. */
  async finish(): Promise<void> {
    for (const out of this.files.values()) {
      if (out.closed) continue;
      out.end();
      await finished(out).catch(() => {});
    }
    if (this.failure) throw this.failure;
  }

  async *read(object: string): AsyncGenerator<{ line: number; raw: Record<string, unknown> }> {
    if (!this.files.has(object)) return;
    const lines = linesOf(createReadStream(this.path(object), { encoding: 'utf8' }));
    for await (const text of lines) {
      if (text === '') continue;
      const tab = text.indexOf('\t');
      yield { line: Number(text.slice(0, tab)), raw: JSON.parse(text.slice(tab + 1)) as Record<string, unknown> };
    }
  }

  async remove(): Promise<void> {
    for (const out of this.files.values()) {
      if (out.closed) continue;
      out.destroy();
      await finished(out).catch(() => {});
    }
    await this.#temp.remove();
  }
}
