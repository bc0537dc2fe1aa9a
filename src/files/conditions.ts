// The preconditions of a download that can refuse it (RFC 9110 §13.1.1, §13.1.4, in the order of
// §13.2.2): If-Match, else If-Unmodified-Since. A client that resumes a download guards its Range
// with them, so a false one must refuse the request rather than serve a piece of other bytes
// (docs/files.md §Addresses). If-None-Match and If-Modified-Since never make a 304 (no-store).

// IMF-fixdate, the one HTTP date a server sends (RFC 9110 §5.6.7); any other text is no date.
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Whether If-Match, by strong comparison, names `etag` (or `*`: the file has bytes). */
function matches(ifMatch: string, etag: string): boolean {
  const tags = ifMatch.split(',').map((s) => s.trim());
  return tags.includes('*') || tags.includes(etag);
}

/**
 * True when the request's preconditions are false for the bytes with `etag`, last changed at
 * `lastModified` (ms): the answer is then 412. An If-Unmodified-Since that is no IMF-fixdate is
 * ignored, as is one sent beside If-Match.
 */
export function preconditionFails(
  conditions: { ifMatch?: string | undefined; ifUnmodifiedSince?: string | undefined },
  etag: string,
  lastModified: number,
): boolean {
  if (conditions.ifMatch !== undefined) return !matches(conditions.ifMatch, etag);
  const since = conditions.ifUnmodifiedSince?.trim();
  if (since === undefined || !IMF_FIXDATE.test(since)) return false;
  const date = Date.parse(since);
  // Last-Modified is sent to the second: the bytes count as changed only in a later second.
  return Number.isFinite(date) && Math.floor(lastModified / 1000) * 1000 > date;
}
