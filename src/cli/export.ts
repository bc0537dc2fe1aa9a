// `rolodex export --workspace W [--types a,b] [--include-trash] [FILE]`: the workspace as NDJSON
// in the import format (docs/import.md §Export), written as it is read, to FILE or stdout.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { RECORD_TYPES } from '../records/service.ts';
import { customTypes, definitionLines, recordLines } from '../records/export.ts';
import { userLines } from '../users/export.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { type Io, operator, parse, required, UsageError, withDb } from './io.ts';

export const usage = `rolodex export --workspace W [--types account,contact,…] [--include-trash] [FILE]   (NDJSON in the import format; stdout without FILE)`;

const SYSTEM_ORDER = ['account', 'contact', 'opportunity', 'note', 'task'];

export async function run(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(args, { workspace: { type: 'string' }, types: { type: 'string' }, 'include-trash': { type: 'boolean' } });
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
  const file = positionals[0];
  const out: Writable = file ? createWriteStream(file) : process.stdout;
  const write = async (line: unknown) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  };
  let count = 0;
  await withDb(io, async (db, config) => {
    const ctx = operator(db, config, workspaceId);
    await requireWorkspace(ctx);
    const custom = await customTypes(ctx);
    const types = [...SYSTEM_ORDER.filter((t) => Object.hasOwn(RECORD_TYPES, t)), ...custom];
    for (const t of wanted ?? []) if (!types.includes(t)) throw new UsageError(`--types: "${t}" is not a type of the workspace (${types.join(', ')})`);
    for await (const line of definitionLines(ctx)) await write(line);
    for await (const line of userLines(ctx)) await write(line);
    for (const type of types) {
      if (wanted && !wanted.has(type)) continue;
      for await (const line of recordLines(ctx, type, !custom.includes(type))) {
        await write(line);
        count++;
      }
    }
  });
  if (file) {
    out.end();
    await once(out, 'close');
    io.err(`exported ${count} records to ${file}`);
  }
}
