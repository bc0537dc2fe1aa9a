// Dependencies some import kinds need beyond the database (the blob store, for files).
import type { Config } from '../config.ts';
import { openBlobStore } from '../runtime.ts';

export async function importExtras(config: Config): Promise<{ values: Record<string, unknown>; close(): Promise<void> }> {
  const blobs = openBlobStore(config);
  return { values: { blobs }, close: () => blobs.close() };
}
