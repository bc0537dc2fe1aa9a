// What Kysely's migrator sees of the catalogue: on PostgreSQL only the schema in use. Its own
// introspection reads every schema of the server, with their columns resolved by name, so a
// schema that another database on the same server creates or drops meanwhile (a test run, another
// tenant) fails or misleads it, and it would take a `kysely_migration` table of any schema for
// its own when the URL names none (docs/deploy.md §Migrations).
import { type DatabaseIntrospector, type Kysely, sql, type TableMetadata } from 'kysely';

/**
 * The migrator asks only whether its schema and tables exist: the tables are listed by name and
 * kind, without columns. `schema` undefined is the connection's current schema.
 */
function ownSchemaCatalogue(kysely: Kysely<any>, schema: string | undefined): DatabaseIntrospector {
  const own = schema === undefined ? sql`current_schema()` : sql`${schema}::text`;
  return {
    getSchemas: async () => (await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${own}`.execute(kysely)).rows,
    getTables: async () => {
      const r = await sql<{ name: string; schema: string; kind: string }>`
        select c.relname as name, n.nspname as schema, c.relkind as kind
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${own} and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(kysely);
      return r.rows.map((t): TableMetadata => ({
        name: t.name,
        schema: t.schema,
        isView: t.kind === 'v' || t.kind === 'm',
        isForeign: t.kind === 'f',
        columns: [],
      }));
    },
  };
}

/**
 * `kysely` for the migrator: the same instance (its methods bound to it, as they read its private
 * state), its `introspection` the schema's own catalogue on PostgreSQL.
 */
export function migratorDb(kysely: Kysely<any>, dialect: 'sqlite' | 'postgres', schema: string | undefined): Kysely<any> {
  if (dialect !== 'postgres') return kysely;
  const catalogue = ownSchemaCatalogue(kysely, schema);
  return new Proxy(kysely, {
    get(target, prop) {
      if (prop === 'introspection') return catalogue;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
