// What `rolodex backup` and `rolodex restore` print where they copy nothing themselves: the
// commands of PostgreSQL's own tools for its database, and where blobs kept in a bucket are backed
// up (docs/deploy.md §Backups).
import type { Config } from '../config.ts';

/** Where blobs are when the backup holds none of them: the bucket, backed up by the store. */
export const bucketNote = (config: Config) => (config.s3 ? `Blobs are in the S3 bucket "${config.s3.bucket}": use the store's versioning or replication.` : '');

/**
 * The printed commands' `--dbname`: `"$DATABASE_URL"`, or that URL as libpq, which pg_dump and
 * pg_restore connect with, takes it. libpq refuses a URL parameter it does not know (`invalid URI
 * query parameter: "search_path"`), where the server's driver passes it on to PostgreSQL: a
 * `search_path` parameter is cut (the dump names the schema itself). It refuses too an `=` inside
 * a parameter's value (`extra key/value separator "=" in URI query parameter: "options"`), which
 * the server reads as the URL standard does (`?options=-c search_path=NAME`): each is written
 * `%3D`. The rest stays as written (docs/deploy.md §Backups).
 */
function libpqUrl(databaseUrl: string): string {
  const query = /[?]([^#]*)/.exec(databaseUrl)?.[1] ?? '';
  const cut = new URL(databaseUrl).searchParams.has('search_path');
  const encode = query.split('&').some((param) => param.indexOf('=') !== param.lastIndexOf('='));
  if (!cut && !encode) return '"$DATABASE_URL"';
  // Only the query is changed (after the first `?`): an `&` or `=` of the password or the path is
  // the URL's, kept. The search_path parameter goes with the `&` that joins it to the next; then
  // each `=` after the first of a parameter becomes `%3D`, one a round (`-e :a … -e ta`).
  const sed = [
    ...(cut ? [`-e 's/^([^?]*[?]([^&]*&)*)search_path=[^&]*(&|$)/\\1/' -e 's/[?&]$//'`] : []),
    ...(encode ? [`-e :a -e 's/^([^?]*[?]([^&]*&)*[^&=]*=[^&=]*)=/\\1%3D/' -e ta`] : []),
  ];
  return `"$(printf %s "$DATABASE_URL" | sed -E ${sed.join(' ')})"`;
}

/**
 * pg_dump's `--schema` for `schema`: the name as it is when PostgreSQL would read it so unquoted
 * and the shell would pass it as it is (a `$`, which a name may hold, starts a shell variable);
 * otherwise (capitals, a `$`, other characters) in double quotes, which pg_dump's pattern takes as
 * written, inside single quotes for the shell.
 */
function schemaOption(schema: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(schema) ? ` --schema=${schema}` : ` --schema='"${schema.replaceAll('"', '""').replaceAll("'", "'\\''")}"'`;
}

/** `schema`: the one the URL names; pg_dump dumps every schema of the database unless named. */
export function pgGuidance(config: Config, action: 'backup' | 'restore', schema?: string): string {
  const blobs = bucketNote(config);
  const only = schema ? schemaOption(schema) : '';
  const url = libpqUrl(config.databaseUrl ?? '');
  return action === 'backup'
    ? `The database is PostgreSQL: back it up with its own tools, e.g.\n  pg_dump --format=custom${only} --file=rolodex-$(date +%F).pgdump --dbname=${url}\n(or continuous archiving for point-in-time recovery). ${blobs}`.trim()
    : `The database is PostgreSQL: restore it with its own tools into an empty database, e.g.\n  pg_restore --no-owner --dbname=${url} rolodex-YYYY-MM-DD.pgdump\nthen run \`rolodex migrate\`. ${blobs}`.trim();
}
