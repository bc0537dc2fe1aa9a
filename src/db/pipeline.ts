// Statements whose answer the caller does not need (a lock, an insert, a counter's update) can be
// marked `deferred`: on PostgreSQL, inside a transaction, they go out together with the next
// statement that is awaited, or with COMMIT (src/db/postgres.ts), in order, so that a transaction
// holding a lock spends one round trip where it spent several. An error of a deferred statement
// surfaces there, as that statement's own error. On SQLite, and outside a transaction, a deferred
// statement runs at once, as any other.
import type { Compilable, CompiledQuery, RawBuilder } from 'kysely';
import type { Executor } from './types.ts';

const marked = new WeakSet<CompiledQuery>();

export function isDeferred(query: CompiledQuery): boolean {
  return marked.has(query);
}

/** Runs `query` in `tx`, sending it with the next statement whose answer is awaited. */
export async function deferred(tx: Executor, query: Compilable | RawBuilder<unknown>): Promise<void> {
  const compiled = 'isRawBuilder' in query ? query.compile(tx) : query.compile();
  marked.add(compiled);
  await tx.executeQuery(compiled);
}
