// Dependencies some import kinds need beyond the database (the blob store, for files).
import type { Config } from '../config.ts';

export async function importExtras(_config: Config): Promise<{ values: Record<string, unknown>; close(): Promise<void> }> {
  return { values: {}, close: async () => {} };
}
