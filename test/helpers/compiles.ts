// What Kysely compiles while a piece of work runs: for the guards that pin which statements are
// built and compiled once (docs/performance.md §Writes compiled once).
import { DefaultQueryCompiler } from 'kysely';

/** The SQL Kysely compiled while `fn` ran. */
export async function compiledDuring<T>(fn: () => Promise<T>): Promise<{ result: T; compiled: string[] }> {
  type Compile = DefaultQueryCompiler['compileQuery'];
  const original: Compile = Reflect.get(DefaultQueryCompiler.prototype, 'compileQuery');
  const compiled: string[] = [];
  DefaultQueryCompiler.prototype.compileQuery = function (this: DefaultQueryCompiler, ...args: Parameters<Compile>) {
    const query = original.apply(this, args);
    compiled.push(query.sql);
    return query;
  };
  try {
    return { result: await fn(), compiled };
  } finally {
    DefaultQueryCompiler.prototype.compileQuery = original;
  }
}
