import { access, stat } from 'node:fs/promises';
import type { Config } from '../config.ts';
import { refreshStatistics, statementJournalsInMemory, takeDatabaseAlone, useBulkCache, type Db } from '../db/index.ts';
import { InputError } from '../lib/errors.ts';
import { importKinds } from './import-kinds.ts';
import { type CommitMode, ImportFailed, runImport, secondsSince } from '../import/run.ts';
import { fileSource, type ImportSource } from '../import/source.ts';
import { type ImportInput, regularInput } from '../import/input.ts';
import { ImportError } from '../import/kind.ts';
import { ImportIds } from '../import/ids.ts';
import { openBlobStore } from '../runtime.ts';
import { csvSource } from '../records/csv.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { badValue, countOf, type Io, oneOf, operator, parse, print, Report, required, UsageError, withDb } from './io.ts';

export const usage = `rolodex import --workspace W FILE [--format ndjson|csv] [--type T] [--commit atomic|batched] [--json]   (NDJSON, a JSON array, or CSV of one type; see docs/import.md)`;

function progressBar(io: Io) {
  let last = 0;
  return (phase: string, done: number, total: number) => {
    const now = Date.now();
    if (!io.isTty || (now - last < 100 && done < total)) return;
    last = now;
    const width = 30;
    const filled = Math.round((done / total) * width);
    process.stderr.write(
      `\r${phase.padEnd(7)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round((done / total) * 100)}%${done >= total ? '\n' : ''}`,
    );
  };
}

/** Entries of the id map written at a time. */
const IDS_PER_WRITE = 4096;

/**
 * The --json summary: `summary` with the id map of `ids` as its `ids` member, after `counts`.
 * The map is written from the store a few thousand entries at a time, never built whole: it
 * grows with the file (docs/import.md §Memory).
 */
async function printJson(io: Io, summary: { counts: Record<string, number> } & Record<string, unknown>, ids: ImportIds): Promise<void> {
  const write = (text: string) => (io.write ? io.write(text) : io.out(text));
  const { counts, ...rest } = summary;
  let piece = `{"counts":${JSON.stringify(counts)},"ids":{`;
  let n = 0;
  for (const [i, object] of ids.objects().entries()) {
    piece += `${i > 0 ? ',' : ''}${JSON.stringify(object)}:{`;
    let first = true;
    for (const [externalId, id] of ids.entries(object)) {
      piece += `${first ? '' : ','}${JSON.stringify(externalId)}:${JSON.stringify(id)}`;
      first = false;
      if (++n % IDS_PER_WRITE === 0) {
        await write(piece);
        piece = '';
      }
    }
    piece += '}';
  }
  await write(`${piece}},${JSON.stringify(rest).slice(1)}\n`);
}

export async function run(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      workspace: { type: 'string' },
      commit: { type: 'string' },
      format: { type: 'string' },
      type: { type: 'string' },
    },
    1,
  );
  const workspaceId = required(values, 'workspace');
  const file = positionals[0];
  if (!file) throw new UsageError('the file to import is required');
  const commit = oneOf<CommitMode>('commit', values.commit, ['atomic', 'batched']);
  // Without --format, the extension: `.csv` is CSV, any other NDJSON or a JSON array. A `.tsv`
  // file's tab-separated values are no format of the import (docs/import.md §Format).
  if (values.format === undefined && file.toLowerCase().endsWith('.tsv'))
    throw new InputError(
      `cannot read ${file}: a .tsv file holds tab-separated values, which the import does not read: save it as comma-separated CSV and import that with --type T`,
    );
  const format = (values.format as string | undefined) ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'ndjson');
  // `json` (a JSON array) is read as NDJSON is, and is not offered.
  if (format !== 'csv' && format !== 'ndjson' && format !== 'json') throw badValue('format', format, 'ndjson or csv');
  const type = values.type as string | undefined;
  if (format === 'csv' && !type) throw new UsageError("a CSV import needs --type (account, contact, opportunity, note, task or a custom type's slug)");
  if (format !== 'csv' && type) throw new UsageError('--type is for CSV files (--format csv)');
  let source: ImportSource | undefined;
  let input: ImportInput | undefined;
  const read = performance.now();
  try {
    await access(file);
    const stats = await stat(file);
    if (stats.isDirectory()) throw new Error('a directory, not a file');
    // A device never ends (`/dev/zero`, a terminal) or is no input at all: its copy would fill the disk.
    if (stats.isCharacterDevice() || stats.isBlockDevice()) throw new Error('a device, not a file or a pipe');
    // A pipe (`<(zcat x.gz)`, /dev/stdin) is read through a copy: the readers seek (src/import/input.ts).
    input = await regularInput(file);
    if (format !== 'csv') source = await fileSource(input.path);
  } catch (err) {
    await input?.remove();
    throw new InputError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const path = input.path;
  const started = Date.now();
  const reading = secondsSince(read);
  // The ids stay in this store until they are printed (--json); the result holds none of them.
  const ids = await ImportIds.open().catch(async (err: unknown) => {
    await input.remove();
    throw err;
  });
  const apply = async (db: Db, config: Config) => {
    const ctx = operator(db, config, workspaceId);
    await requireWorkspace(ctx);
    await useBulkCache(db.kysely);
    const blobs = await openBlobStore(config);
    try {
      const alone = await takeDatabaseAlone(db.kysely);
      try {
        // A server sharing the SQLite file would wait for one long transaction: the import then
        // commits chunk by chunk (docs/import.md §Sharing the database).
        const mode = commit ?? (alone.journal === 'wal' ? 'batched' : 'atomic');
        if (mode === 'batched') await statementJournalsInMemory(db.kysely);
        const input = source ?? (await csvSource(ctx, path, type as string));
        const result = await runImport(ctx, {
          kinds: importKinds({ blobs, downloadTtlSeconds: config.downloadTtlSeconds }),
          source: input,
          commit: mode,
          onProgress: progressBar(io),
          ids,
        });
        const analysed = performance.now();
        await refreshStatistics(db, { bulk: true });
        return {
          ...result,
          commit: mode,
          phases: { ...result.phases, statistics: secondsSince(analysed) },
          ...(alone.journal ? { journal: alone.journal } : {}),
        };
      } finally {
        await alone.restore();
      }
    } finally {
      await blobs.close();
    }
  };
  try {
    // On SQLite, statements run on a thread of their own while the next batch is built (docs/import.md §Speed).
    const result = await withDb(io, apply, { writerThread: true }).catch((err: unknown) => {
      // The report: its head, then one line per bad object (docs/import.md §Rules).
      if (err instanceof ImportFailed) {
        const what = err.committed ? 'the chunks written before the error stay (run it again once fixed)' : 'nothing was written';
        // Each bad object's line is shown escaped already (docs/import.md §Rules): none holds a line break.
        throw new Report([`import failed, ${what}:`, ...err.message.split('\n')]);
      }
      if (err instanceof ImportError) throw new Report(['import failed, nothing was written:', err.message]);
      throw err;
    });
    const seconds = (Date.now() - started) / 1000;
    const summary = Object.entries(result.counts)
      .map(([kind, n]) => countOf(n, kind))
      .join(', ');
    const { ids: _none, ...rest } = result;
    if (values.json) await printJson(io, { ...rest, phases: { read: reading, ...result.phases }, seconds }, ids);
    else print(io, false, undefined, `imported ${summary || 'nothing'} in ${seconds.toFixed(1)} s`);
  } finally {
    await ids.close();
    await input.remove();
  }
}
