// The schema a DATABASE_URL names (`?options=-c search_path=x`), read without loading the driver:
// the schema in use on that server, which migrations create and backups name (docs/deploy.md).

/** The schema the URL's `search_path` option names; undefined when it names none (`public`). */
export function schemaInUrl(url: string): string | undefined {
  const options = new URL(url).searchParams.get('options') ?? '';
  return /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
}
