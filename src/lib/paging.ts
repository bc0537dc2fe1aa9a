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

/** How many rows the page holds of a listing of `totalCount` rows: a full page, the rest, or none. */
export function rowsOnPage(page: Page, totalCount: number): number {
  return Math.max(0, Math.min(page.limit, totalCount - page.offset));
}

// Reads of a page before it is given up on as changing under it (docs/pages.md §Pages read in two steps).
const PAGE_READS = 3;

/**
 * A page read in two steps (its ids with the count, then the records), which a write committing
 * between them can leave with fewer rows than its count promises: a record moved to the trash
 * or merged away is no longer there to load, or a filter's count and rows disagree. Such a page
 * is read again, whole, so that the rows and `totalCount` answered agree (docs/pages.md §Pages
 * read in two steps).
 */
export async function agreeingPage<T>(page: Page, read: () => Promise<{ data: T[]; totalCount: number }>) {
  for (let n = 1; ; n++) {
    const { data, totalCount } = await read();
    if (data.length === rowsOnPage(page, totalCount) || n === PAGE_READS) return envelope(data, totalCount);
  }
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
