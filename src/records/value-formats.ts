// How a write spells the value of each valueType, in one line each (docs/records.md §Writing
// fields, docs/design.md §Record values). The OpenAPI document shows them on the `fields` of every
// record write, and the MCP tool search_api_docs finds them by words (docs/mcp.md §Tools), so that
// a client learns the form a value takes before the API refuses one. docs/records.md §Value formats
// lists them word for word, and test/ops/rules-in-docs.test.ts fails when the two differ.
import type { ValueType } from '../lib/value-types.ts';

export const VALUE_FORMATS: Readonly<Record<ValueType, string>> = {
  ADDRESS:
    'A closed object whose members are all optional: street, street2, city, state, postalCode (strings of at most 255 characters), country (an ISO 3166-1 alpha-2 code such as "DE", answered upper-cased), latitude (a number from -90 to 90) and longitude (-180 to 180). A null member is left out; one member must hold a number or more than white space and invisible characters ({} is refused). null unsets the address.',
  CHECKBOX: 'A boolean, true or false.',
  CURRENCY:
    "A JSON number, never a string: the amount in the field's currency (its definition's typeConfiguration.currency, an ISO 4217 code). Kept as a double and answered in its shortest form (19.90 is 19.9).",
  DATETIME:
    'An ISO 8601 date-time string with a time zone, such as "2026-03-01T09:30:00Z" or "2026-03-01T10:30:00+01:00", in the years 0000 to 9999 in UTC. Answered in UTC with milliseconds ("2026-03-01T09:30:00.000Z").',
  EMAIL:
    'An e-mail address as a string ("ann@acme.test") of at most 320 characters, without white space, control or invisible characters. A field with multipleValues (a contact\'s $email) takes an array of addresses, or one string as a list of one.',
  FULL_NAME:
    'A closed object {"firstName": "Ann", "lastName": "Lee"} of strings of at most 255 characters; either part may be left out, but one must hold more than white space and invisible characters ({} is refused). null unsets the name.',
  MARKDOWN: 'A string of Markdown text, at most 100,000 characters.',
  MULTI_SELECT:
    "An array of distinct options, each named by its id (opt_…) or its exact label, at most 1,000; answered as the array of option ids. The options are in the type's GET …/definitions.",
  NUMBER:
    "A JSON number, never a string; kept as an IEEE 754 double. A number beyond a double's range (1e400) or an integer no double holds (12345678901234567890) is refused, not rounded to another.",
  SINGLE_SELECT: "One option named by its id (opt_…) or its exact label, answered as the option's id. The options are in the type's GET …/definitions.",
  SOCIAL_HANDLE:
    'A string: a profile URL or a bare handle, with or without @. A field with a handleService (LINKEDIN, TWITTER, FACEBOOK, INSTAGRAM) keeps and answers the profile URL on that service ("ann-lee" on LINKEDIN is "https://linkedin.com/in/ann-lee"); one without keeps 1 to 255 characters without white space.',
  TELEPHONE:
    'A phone number as a string, kept and answered in E.164 ("+12025550123"), an extension after ";ext=" ("+12025550123;ext=100"; "x100", "ext. 100" and "#100" are read as one). A number without "+" and a country code is read in the field\'s or the workspace\'s default country, and refused when there is none.',
  TEXT: 'A string of at most 10,000 characters; a required one (a $name, a $title) is not white space and invisible characters (U+200B, U+FEFF) alone.',
  URL: 'An absolute http or https URL as a string, with a host and without white space, control characters or backslashes inside ("https://acme.test/pricing"), at most 2,048 characters; white space around it is left out.',
};

/** The rules as the OpenAPI document lists them, one line per valueType, after `null` clears. */
export function valueFormatsText(): string {
  const lines = Object.entries(VALUE_FORMATS).map(([type, rule]) => `- ${type}: ${rule}`);
  return ["By the field's valueType (its definition); null clears a field that is not required:", ...lines].join('\n');
}
