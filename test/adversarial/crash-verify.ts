// After the crashes: every COMPLETED file's stored bytes have exactly its recorded size and MD5.
import type { TestDb } from '../helpers/db.ts';
import type { Acked } from './crash-workload.ts';

export async function verifyFiles(_tdb: TestDb, _workspaceId: string, _acked: Acked): Promise<number> {
  throw new Error('files are not served by this build');
}
