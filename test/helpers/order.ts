// The order every listing of the API gives (docs/pages.md): newest first by createdAt, ties by id,
// for tests that build the expected page themselves.

/** Newest first by createdAt, ties by id (the larger first). */
export function newestFirst(a: { id: string; createdAt: string }, b: { id: string; createdAt: string }): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
