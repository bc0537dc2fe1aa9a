// The schema a DATABASE_URL names, read without loading the driver: the schema in use on that
// server, which migrations create and backups name (docs/deploy.md §Database connections). The URL
// may name it as a connection parameter of its own (`?search_path=x`, which the driver sends at
// connect time and which then wins) or inside libpq's `options` (`?options=-c search_path=x`).
// PostgreSQL reads a name of the path that is not quoted in lower case (`Rolodex` is the schema
// `rolodex`) and a quoted one as written (`"Rolodex"`, a `""` in it one quote), so it is read so
// here too: the schema migrations create is the one the path finds. `$user`, quoted or not (its
// own default path is `"$user", public`), is no schema of that name but the session user's where
// it exists: a path that begins with it names none here, and the connection's current schema is
// the one in use, as when the URL names no path.

/** A name of a search path, first: quoted (group 1) or not (group 2). */
const NAME = '(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))';
const FIRST_NAME = new RegExp(`^${NAME}`);
const IN_OPTIONS = new RegExp(`search_path=${NAME}`);

/** The first schema of the URL's `search_path`, as PostgreSQL reads it; undefined when it names none (`public`). */
export function schemaInUrl(url: string): string | undefined {
  const params = new URL(url).searchParams;
  const own = params.get('search_path');
  const m = own !== null ? FIRST_NAME.exec(own.trim()) : IN_OPTIONS.exec(params.get('options') ?? '');
  if (!m) return undefined;
  const name = m[1] !== undefined ? m[1].replaceAll('""', '"') : m[2]!.toLowerCase();
  return name === '$user' ? undefined : name;
}
