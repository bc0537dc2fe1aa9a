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
 * Every row of a read paged by id (keyset: the rows whose id is after `after`, `''` first), a page
 * at a time: an export's reads, so that memory holds one page whatever the table's size
 * (docs/import.md §Export), and each page is one short statement.
 */
export async function* keysetPages<R extends { id: string }>(page: (after: string) => Promise<R[]>): AsyncGenerator<R[]> {
  let after = '';
  for (;;) {
    const rows = await page(after);
    const last = rows.at(-1);
    if (!last) return;
    after = last.id;
    yield rows;
  }
}
