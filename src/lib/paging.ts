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
