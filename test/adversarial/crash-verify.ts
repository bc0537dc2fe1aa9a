// After the crashes: every COMPLETED file's stored bytes have exactly its recorded size and MD5,
// and every acknowledged completion is COMPLETED with the bytes the client sent.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createDiskBlobStore } from '../../src/blobs/index.ts';
import type { TestDb } from '../helpers/db.ts';
import type { Acked } from './crash-workload.ts';

interface FileRow {
  id: string;
  status: string;
  size_bytes: number;
  md5: string | null;
  blob_key: string | null;
}

export async function verifyFiles(tdb: TestDb, workspaceId: string, acked: Acked): Promise<number> {
  // The files tables are typed by the files module; read them untyped so this file does not depend on it.
  const db = tdb.db.kysely as any;
  const rows: FileRow[] = await db
    .selectFrom('files')
    .select(['id', 'status', 'size_bytes', 'md5', 'blob_key'])
    .where('workspace_id', '=', workspaceId)
    .execute();
  const blobs = createDiskBlobStore(join(tdb.dataDir, 'blobs'));
  let checked = 0;
  try {
    for (const row of rows.filter((r) => r.status === 'COMPLETED')) {
      assert.ok(row.blob_key, `COMPLETED file ${row.id} has no bytes`);
      const hash = createHash('md5');
      let size = 0;
      for await (const chunk of await blobs.read(row.blob_key)) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
      const md5 = hash.digest('hex');
      assert.equal(size, Number(row.size_bytes), `COMPLETED file ${row.id}: ${size} bytes stored, ${row.size_bytes} recorded`);
      if (row.md5 !== null) assert.equal(md5, row.md5, `COMPLETED file ${row.id}: stored bytes do not have the recorded MD5`);
      const sent = acked.files.get(row.id);
      if (sent) assert.equal(md5, sent.md5, `file ${row.id}: not the bytes acknowledged`);
      checked++;
    }
    for (const f of acked.files.values())
      assert.ok(
        rows.some((r) => r.id === f.id && r.status === 'COMPLETED'),
        `acknowledged completion of ${f.id} lost`,
      );
  } finally {
    await blobs.close();
  }
  return checked;
}
