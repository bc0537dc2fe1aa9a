// The checked objects of an import, kept on disk by kind between the check and the writes
// (docs/import.md §Memory): one temporary NDJSON file per kind, `line<TAB>json` a line, read back
// kind by kind in dependency order. The directory is removed when the import ends.
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export class Spill {
  private readonly dir: string;
  private readonly files = new Map<string, WriteStream>();

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async open(): Promise<Spill> {
    return new Spill(await mkdtemp(join(tmpdir(), 'rolodex-import-')));
  }

  private path(object: string): string {
    return join(this.dir, `${encodeURIComponent(object)}.ndjson`);
  }

  async add(object: string, line: number, raw: unknown): Promise<void> {
    let out = this.files.get(object);
    if (!out) this.files.set(object, (out = createWriteStream(this.path(object))));
    if (!out.write(`${line}\t${JSON.stringify(raw)}\n`)) await once(out, 'drain');
  }

  /** Flushes every file; reads may start. */
  async finish(): Promise<void> {
    for (const out of this.files.values()) {
      out.end();
      await once(out, 'close');
    }
  }

  async *read(object: string): AsyncGenerator<{ line: number; raw: Record<string, unknown> }> {
    if (!this.files.has(object)) return;
    const lines = createInterface({ input: createReadStream(this.path(object), { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const text of lines) {
      if (text === '') continue;
      const tab = text.indexOf('\t');
      yield { line: Number(text.slice(0, tab)), raw: JSON.parse(text.slice(tab + 1)) as Record<string, unknown> };
    }
  }

  async remove(): Promise<void> {
    for (const out of this.files.values()) if (!out.closed) out.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
