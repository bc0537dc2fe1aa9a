// Derived relationships (docs/records.md §Definitions): computed when read by the module that owns
// them, such as `$meeting`. That module registers its resolver when the app is composed; records
// never import it, so the owner may depend on records and not the other way round. Until one is
// registered, a derived relationship is empty.
import type { Ctx } from '../lib/context.ts';

/** The ids of `key` for each of `ids` (records of `objectType`); a record left out has none. */
export type DerivedResolver = (ctx: Ctx, input: { objectType: string; key: string; ids: readonly string[] }) => Promise<Map<string, string[]>>;

const resolvers = new Map<string, DerivedResolver>();

export function registerDerived(objectType: string, key: string, resolver: DerivedResolver): void {
  resolvers.set(`${objectType}/${key}`, resolver);
}

export async function resolveDerived(ctx: Ctx, objectType: string, key: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const resolver = resolvers.get(`${objectType}/${key}`);
  return resolver ? resolver(ctx, { objectType, key, ids }) : new Map();
}
