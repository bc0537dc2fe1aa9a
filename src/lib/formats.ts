// The `format` keywords of the API's request schemas, checked as a request body checks them (with
// ajv-formats' full formats), for the writers that take values outside a request: an import holds
// its values to the rules the API holds a create to (docs/import.md).
import type { Format } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';

function matches(format: Format, value: string): boolean {
  if (format instanceof RegExp) return format.test(value);
  if (typeof format === 'function') return format(value) === true;
  throw new Error('a format this module does not check');
}

/** What `format: "email"` accepts: a bare address, no display name. */
export const isEmailFormat = (value: string): boolean => matches(fullFormats.email, value);

/** What `format: "uri"` accepts: an absolute URI of any scheme. */
export const isUriFormat = (value: string): boolean => matches(fullFormats.uri, value);
