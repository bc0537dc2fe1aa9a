// Pagination of every list endpoint (docs/design.md §Pagination and order): limit 1–25 (default
// 25), offset ≥ 0 (default 0); anything else is refused with invalid_parameter, never clamped.
// The services' side; the schemas of the query and of the envelope are in src/lib/paging-schemas.ts,
// which only the transport loads.

export const MAX_PAGE = 25;

export interface Page {
  limit: number;
  offset: number;
}

export function envelope<T>(data: T[], totalCount: number) {
  return { data, object: 'list' as const, totalCount };
}

/**
 * Every row of a keyset-paged read, a page at a time: `page(after)` reads the rows after the key
 * `after` (none: from the first), and `keyOf` gives a row's key. An export's reads, so that memory
 * holds one page whatever the table's size (docs/import.md §Export), and each page is one short
 * statement.
 */
export async function* keysetPagesBy<R, K>(page: (after: K | undefined) => Promise<R[]>, keyOf: (row: R) => K): AsyncGenerator<R[]> {
  let after: K | undefined;
  for (;;) {
    const rows = await page(after);
    const last = rows.at(-1);
    if (last === undefined) return;
    after = keyOf(last);
    yield rows;
  }
}

/** As keysetPagesBy, for a read paged by id (`''` before the first). */
export function keysetPages<R extends { id: string }>(page: (after: string) => Promise<R[]>): AsyncGenerator<R[]> {
  return keysetPagesBy(
    (after: string | undefined) => page(after ?? ''),
    (row) => row.id,
  );
}
