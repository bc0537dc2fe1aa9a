// Pagination of every list endpoint (docs/design.md §Pagination and order): limit 1–25 (default
// 25), offset ≥ 0 (default 0); anything else is refused with invalid_parameter, never clamped.
import { type TSchema, Type } from '@sinclair/typebox';

export const MAX_PAGE = 25;

export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Page size, 1 to 25.' }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0, description: 'Items to skip.' }),
  },
  { additionalProperties: false },
);

export interface Page {
  limit: number;
  offset: number;
}

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

export function envelope<T>(data: T[], totalCount: number) {
  return { data, object: 'list' as const, totalCount };
}
