// The query string of a filterable listing (docs/filtering.md): limit and offset as every list
// takes them, and any other key as a filter. The key names a filter (`$name[equal]`; Fastify's
// query string parser does not nest brackets, so the key arrives exactly as written) and a
// repeated key arrives as an array. The schema only bounds sizes; parseFilters refuses any key
// that is not a filter of the type, so an unknown parameter is still answered with
// invalid_parameter naming it.
import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../lib/paging.ts';
import { MAX_FILTERS, MAX_VALUE_LENGTH } from './parse.ts';

const FilterValue = Type.String({ maxLength: MAX_VALUE_LENGTH });

export const FilteredPageQuery = Type.Object(PageQuery.properties, {
  additionalProperties: Type.Union([FilterValue, Type.Array(FilterValue, { maxItems: MAX_FILTERS })]),
  description: 'limit, offset, and filters: `<key>=<value>` or `<key>[<operator>]=<value>` (docs/filtering.md).',
});
export type FilteredPageQuery = Static<typeof FilteredPageQuery>;
