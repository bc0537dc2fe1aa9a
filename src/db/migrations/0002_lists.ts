import type { Kysely } from 'kysely';

// Tables for lists and records: written by that work.
export async function up(_db: Kysely<any>): Promise<void> {}
