// The one rule of a URL value (docs/records.md §Writing fields, `URL`), for records and for a
// meeting's $meetingUrl (docs/meetings.md §Writes): a URL as written, `http://` or `https://` and a
// host, without white space, control characters or backslashes. The URL parser would read past
// them (it drops tabs and line breaks inside, reads `\` as `/` and `https:acme.test` as
// `https://acme.test/`), and the stored text would then be no URL at all.
const HTTP_URL_AS_WRITTEN = /^https?:\/\/[^\s\p{Cc}/\\][^\s\p{Cc}\\]*$/iu;

/** What a URL value takes: an absolute http or https URL with a host, as written. */
export function isHttpUrl(value: string): boolean {
  if (!HTTP_URL_AS_WRITTEN.test(value)) return false;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
}
