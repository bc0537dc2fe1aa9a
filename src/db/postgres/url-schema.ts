// The schema a DATABASE_URL names, read without loading the driver: the schema in use on that
// server, which migrations create and backups name (docs/deploy.md §Database connections). The URL
// may name it as a connection parameter of its own (`?search_path=x`, which the driver sends at
// connect time and which then wins) or inside libpq's `options` (`?options=-c search_path=x`).
// PostgreSQL reads a name of the path that is not quoted in lower case (`Rolodex` is the schema
// `rolodex`), so it is folded here too: the schema migrations create is the one the path finds.

const FIRST_NAME = /^([A-Za-z_][A-Za-z0-9_]*)/;

/** The first schema of the URL's `search_path`, as PostgreSQL reads it; undefined when it names none (`public`). */
export function schemaInUrl(url: string): string | undefined {
  const params = new URL(url).searchParams;
  const own = params.get('search_path');
  const name = own !== null ? FIRST_NAME.exec(own.trim())?.[1] : /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(params.get('options') ?? '')?.[1];
  return name?.toLowerCase();
}
