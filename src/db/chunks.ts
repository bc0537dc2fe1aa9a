/** Splits long id lists so that no query exceeds the databases' parameter limits. */
export function* chunks<T>(items: T[], size = 500): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
