// `rolodex export --workspace W [--types a,b] [--include-trash] [--files DIR] [FILE]`: the
// workspace as NDJSON in the import format (docs/import.md §Export), written as it is read, to
// FILE or stdout. FILE is written under a temporary name beside it and takes its name only when
// the export is complete, so a failed export leaves FILE as it was. With `--files DIR`, the files'
// bytes are copied into DIR and the lines link to them; a failed export removes DIR if it made it.
import { once } from 'node:events';
import { lstat, open, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { channelLines } from '../channels/export.ts';
import { InputError } from '../lib/errors.ts';
import { listLines } from '../lists/export.ts';
import { meetingLines } from '../meetings/export.ts';
import { messageLines } from '../messages/export.ts';
import { RECORD_TYPES } from '../records/service.ts';
import { customTypes, definitionLines, recordLines } from '../records/export.ts';
import { emailLines } from '../emails/export.ts';
import { type FileNames, fileLines, fileNames, filesDir } from '../files/export.ts';
import { mailboxLines } from '../mailboxes/export.ts';
import { userLines } from '../users/export.ts';
import { workspaceLines } from '../workspaces/export.ts';
import { heldRows, trashedRecordLines } from '../trash/export.ts';
import { type TrashClashes, trashClashes } from '../trash/export-clashes.ts';
import type { Config } from '../config.ts';
import type { Ctx } from '../lib/context.ts';
import { readSnapshot } from '../db/index.ts';
import { openBlobStore } from '../runtime.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { countOf, type Io, operator, parse, required, UsageError, withDb } from './io.ts';
import { undoneIfInterrupted } from './interrupt.ts';

export const usage = `rolodex export --workspace W [--types account,contact,…] [--include-trash] [--files DIR] [FILE]   (NDJSON in the import format; stdout without FILE)`;

const SYSTEM_ORDER = ['account', 'contact', 'opportunity', 'note', 'task'];

export type Write = (line: unknown) => Promise<void>;

export async function run(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      workspace: { type: 'string' },
      types: { type: 'string' },
      'include-trash': { type: 'boolean' },
      files: { type: 'string' },
    },
    1,
  );
  const workspaceId = required(values, 'workspace');
  const wanted =
    typeof values.types === 'string'
      ? new Set(
          values.types
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== ''),
        )
      : undefined;
  if (wanted?.size === 0) throw new UsageError('--types names at least one type (account,contact,…)', 'types');
  const file = positionals[0];
  if (values.files === '') throw new UsageError('--files names a directory', 'files');
  const dir = typeof values.files === 'string' ? await filesDir(values.files) : undefined;
  const body = (write: Write) => exportLines(io, { workspaceId, wanted, trash: values['include-trash'] === true, files: dir?.path }, write);
  // Interrupted, the export removes what it wrote, as a failed one does: FILE's partial copy, and
  // DIR when it made it (src/cli/interrupt.ts).
  const written = dir?.made ? [dir.made] : [];
  const undo = {
    command: 'export',
    line: (signal: string) => `interrupted by ${signal}; ${file ? `${file} was not written` : 'the export is incomplete'}`,
    written: () => written,
  };
  const records = await undoneIfInterrupted(undo, () => (file ? toFile(file, body, written) : toStdout(body))).catch(async (err: unknown) => {
    await dir?.discard();
    throw err;
  });
  if (file) io.err(`exported ${countOf(records, 'record')} to ${file}`);
}

/**
 * Writes the workspace's lines; returns how many records it wrote. `files`: the directory the
 * files are copied into. Every line is read from one snapshot of the database, taken before the
 * first: the file holds the workspace as it was then, whatever is written meanwhile, so every
 * reference of a line names an object of the file (docs/import.md §One state of the workspace).
 */
export async function exportLines(
  io: Io,
  opts: { workspaceId: string; wanted: Set<string> | undefined; trash: boolean; files: string | undefined },
  write: Write,
): Promise<number> {
  const { wanted } = opts;
  let count = 0;
  await withDb(io, (db, config) =>
    readSnapshot(db.kysely, async (snapshot) => {
      const ctx = { ...operator(db, config, opts.workspaceId), db: snapshot };
      const files = opts.files ? fileNames(ctx) : undefined;
      await requireWorkspace(ctx);
      const custom = await customTypes(ctx);
      const types = [...SYSTEM_ORDER.filter((t) => Object.hasOwn(RECORD_TYPES, t)), ...custom];
      // Only the database knows the workspace's types: refused, not wrong usage (docs/cli.md §The operator CLI).
      for (const t of wanted ?? [])
        if (!types.includes(t)) throw new InputError(`--types: "${t}" is not a type of workspace ${opts.workspaceId} (${types.join(', ')})`, 'types');
      // Read before any line: a live record's line may name a trashed record of any type.
      const clashes = opts.trash ? await trashClashes(ctx, types) : undefined;
      try {
        count = await writeLines(ctx, config, { wanted, types, custom, dir: opts.files, files }, clashes, write);
      } finally {
        await clashes?.close();
      }
      if (clashes && clashes.dropped > 0)
        io.err(
          `rolodex export: ${countOf(clashes.dropped, 'value')} of unique fields left out of records in the trash: another record holds them (docs/import.md §Export)`,
        );
    }),
  );
  return count;
}

/** Writes the lines of the workspace of `ctx`, in the order of docs/import.md §Export; returns how many records it wrote. */
async function writeLines(
  ctx: Ctx,
  config: Config,
  opts: { wanted: Set<string> | undefined; types: string[]; custom: string[]; dir: string | undefined; files: FileNames | undefined },
  clashes: TrashClashes | undefined,
  write: Write,
): Promise<number> {
  const held = clashes ? heldRows(ctx, clashes) : undefined;
  let count = 0;
  for await (const line of definitionLines(ctx)) await write(line);
  for await (const line of workspaceLines(ctx)) await write(line);
  for await (const line of userLines(ctx)) await write(line);
  if (opts.dir) for await (const line of fileLines(ctx, opts.dir, () => openBlobStore(config))) await write(line);
  for await (const line of channelLines(ctx)) await write(line);
  for await (const line of mailboxLines(ctx)) await write(line);
  for (const type of opts.types) {
    if (opts.wanted && !opts.wanted.has(type)) continue;
    const system = !opts.custom.includes(type);
    for await (const line of recordLines(ctx, type, system, held, opts.files)) {
      await write(line);
      count++;
    }
    if (!held || !clashes) continue;
    for await (const line of trashedRecordLines(ctx, type, system, held, clashes, opts.files)) {
      await write(line);
      count++;
    }
  }
  for await (const line of listLines(ctx, opts.wanted, held)) await write(line);
  for await (const line of meetingLines(ctx, opts.files)) await write(line);
  for await (const line of messageLines(ctx, opts.files)) await write(line);
  for await (const line of emailLines(ctx, opts.files)) await write(line);
  return count;
}

/**
 * A stream's writer, waiting when it is full. A write error, emitted or thrown (stdout to a full
 * disk, or a pipe whose reader has gone, as `| head`), is one plain InputError, thrown by that
 * write or the next.
 */
function writer(out: Writable, name: string): { write: Write; failed: () => Error | undefined } {
  let failure: Error | undefined;
  const fail = (err: Error) => (failure ??= new InputError(`cannot write ${name}: ${err.message}`));
  out.on('error', fail);
  const write: Write = async (line) => {
    if (failure) throw failure;
    let room: boolean;
    try {
      room = out.write(`${JSON.stringify(line)}\n`);
    } catch (err) {
      throw fail(err as Error);
    }
    if (!room) await once(out, 'drain').catch((err: Error) => Promise.reject(fail(err)));
  };
  return { write, failed: () => failure };
}

async function toStdout(body: (write: Write) => Promise<number>): Promise<number> {
  return body(writer(process.stdout, 'stdout').write);
}

/** `written`: the partial file is added to it, once made. */
async function toFile(file: string, body: (write: Write) => Promise<number>, written: string[]): Promise<number> {
  // FILE takes its name by a rename once the export is complete (docs/import.md §Export): a
  // directory there would fail that rename after the whole export, and a device or a pipe would be
  // replaced by the file, never written to; so each is refused before the export.
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw new InputError(`cannot write ${file}: it is a directory`);
  if (existing && !existing.isFile())
    throw new InputError(
      `cannot write ${file}: it is not a regular file (a device or a pipe, which the export would replace): leave FILE out to write to stdout`,
    );
  // A symbolic link at FILE is written through: the export takes the place of its target, and
  // the link stays (an operator's `latest.ndjson` pointing into a dated directory).
  const target = await linkTarget(file);
  const partial = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
  let out: Writable;
  try {
    out = (await open(partial, 'wx', 0o600)).createWriteStream();
    written.push(partial);
  } catch (err) {
    throw new InputError(`cannot write ${file}: ${await whyNotCreated(target, err as NodeJS.ErrnoException)}`);
  }
  const { write, failed } = writer(out, file);
  try {
    const count = await body(write);
    out.end();
    await finished(out).catch(() => {});
    const failure = failed();
    if (failure) throw failure;
    await rename(partial, target).catch((err: Error) => {
      throw new InputError(`cannot write ${file}: ${withoutPaths(err)}`);
    });
    // Complete: an interruption from now on removes nothing.
    written.length = 0;
    return count;
  } catch (err) {
    out.destroy();
    await finished(out).catch(() => {});
    await rm(partial, { force: true });
    throw err;
  }
}

/** Where a link at `file` leads (followed to the end, a dangling one to its first target), else `file`. */
async function linkTarget(file: string): Promise<string> {
  const link = await lstat(file).catch(() => undefined);
  if (!link?.isSymbolicLink()) return file;
  return realpath(file).catch(async () => resolve(dirname(file), await readlink(file)));
}

/**
 * Why FILE cannot be created, told with the paths the operator gave: the temporary file beside
 * FILE is an implementation detail, and a hidden name in the message hides what to mend.
 */
async function whyNotCreated(file: string, err: NodeJS.ErrnoException): Promise<string> {
  const dir = dirname(file);
  if (err.code === 'ENOENT') return `the directory ${dir} does not exist`;
  if (err.code === 'EACCES' || err.code === 'EPERM') return `this user may not create files in ${dir}`;
  if (err.code === 'EROFS') return `${dir} is on a read-only file system`;
  if (err.code === 'ENOTDIR')
    // A file stands where a directory of FILE's path should be: the nearest one that exists.
    for (let p = dir; p !== dirname(p); p = dirname(p)) {
      const found = await stat(p).catch(() => undefined);
      if (found) return `${found.isDirectory() ? dir : p} is not a directory`;
    }
  return withoutPaths(err);
}

/** A file system error's reason without the paths Node appends (`EIO: i/o error, open '…'`). */
const withoutPaths = (err: Error): string => err.message.replace(/, \w+ '.*$/s, '');
