// What `rolodex backup` and `rolodex restore` print where they copy nothing themselves: the
// commands of PostgreSQL's own tools for its database, and where blobs kept in a bucket are backed
// up (docs/deploy.md §Backups).
import type { Config } from '../config.ts';

/** Where blobs are when the backup holds none of them: the bucket, backed up by the store. */
export const bucketNote = (config: Config) => (config.s3 ? `Blobs are in the S3 bucket "${config.s3.bucket}": use the store's versioning or replication.` : '');

/**
 * The printed commands' `--dbname`: `"$DATABASE_URL"`, or, when the URL names its schema as a
 * `search_path` parameter, the URL without it. libpq, which pg_dump and pg_restore connect with,
 * refuses a URL parameter it does not know (`invalid URI query parameter: "search_path"`), where
 * the server's driver passes it on to PostgreSQL; the dump names the schema itself (docs/deploy.md
 * §Backups). The `options` form of the schema is libpq's own and stays.
 */
function libpqUrl(databaseUrl: string): string {
  if (!new URL(databaseUrl).searchParams.has('search_path')) return '"$DATABASE_URL"';
  // The parameter is cut from the query alone (after the first `?`), with the `&` that joins it to
  // the next: an `&` of the password or the path is the URL's, kept.
  return `"$(printf %s "$DATABASE_URL" | sed -E 's/^([^?]*[?]([^&]*&)*)search_path=[^&]*(&|$)/\\1/; s/[?&]$//')"`;
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
