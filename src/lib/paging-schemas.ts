// The schemas of pagination (src/lib/paging.ts): the query of every list endpoint and the
// paginated envelope, for the routes and their schemas: the services a command runs never load TypeBox.
import { type TSchema, Type } from '@sinclair/typebox';
import { MAX_PAGE } from './paging.ts';

export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Page size, 1 to 25.' }),
    // Any offset past the end answers `data: []` with the true totalCount (docs/design.md
    // §Pagination and order); the bound is only the largest integer a JSON number holds exactly.
    offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Items to skip.' }),
  },
  { additionalProperties: false },
);

/** The paginated envelope: { data, object: "list", totalCount }. */
export function Envelope<T extends TSchema>(item: T, id: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      object: Type.Literal('list'),
      totalCount: Type.Integer({ minimum: 0, description: 'Total number of items matching the query.' }),
    },
    { $id: id, additionalProperties: false },
  );
}
