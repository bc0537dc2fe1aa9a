// The checks of meeting writes beyond their schemas (docs/meetings.md §Writes): keys first
// (unknown and read-only fields and relationships), then values (dates in the past, addresses),
// then ids (the transcript file).
import { type FileRow, findFile } from '../files/repository.ts';
import { checkDownload } from '../files/service.ts';
import type { Ctx } from '../lib/context.ts';
import { blank } from '../lib/chars.ts';
import { AppError } from '../lib/errors.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { emailKey } from '../lib/email.ts';
import { isHttpUrl } from '../lib/http-url.ts';

const FIELDS = ['$title', '$startDate', '$endDate', '$description', '$meetingUrl', '$organizerEmail', '$attendeeEmails', '$privacySetting'];
/** The relationships computed from the participants' addresses when read; never written. */
export const DERIVED = ['$contact', '$account', '$opportunity'];

/** The largest values a meeting holds (docs/meetings.md §Writes), for the API's schemas and the import alike. */
export const LIMITS = { title: 1000, description: 100_000, meetingUrl: 2048, address: 254, attendees: 1000 } as const;

function checkRelationshipKeys(relationships: Record<string, unknown> | undefined): void {
  if (relationships === undefined) return;
  for (const key of Object.keys(relationships)) {
    if (key === '$transcript') continue;
    const param = `relationships.${key}`;
    if (DERIVED.includes(key)) throw new AppError('read_only_relationship', `"${param}" is kept by the server and cannot be written.`, { param });
    throw new AppError('unknown_relationship', `Meetings have no relationship "${key}"; only $transcript can be written.`, { param });
  }
  if (!('$transcript' in relationships)) {
    throw new AppError('parameter_missing', 'relationships needs "$transcript" when it is sent.', { param: 'relationships.$transcript' });
  }
}

export function checkCreateKeys(input: { relationships?: Record<string, unknown> }): void {
  checkRelationshipKeys(input.relationships);
}

export function checkUpdateKeys(input: { fields?: Record<string, unknown>; relationships?: Record<string, unknown> }): void {
  if (input.fields !== undefined) {
    for (const key of Object.keys(input.fields)) {
      if (key === '$privacySetting') continue;
      const param = `fields.${key}`;
      if (FIELDS.includes(key)) throw new AppError('read_only_field', `"${param}" cannot be changed; an update changes only $privacySetting.`, { param });
      throw new AppError('unknown_field', `Unknown field "${param}".`, { param });
    }
    if (!('$privacySetting' in input.fields)) {
      throw new AppError('parameter_missing', 'fields needs "$privacySetting" when it is sent.', { param: 'fields.$privacySetting' });
    }
  }
  checkRelationshipKeys(input.relationships);
}

/**
 * The title as written, refused when it shows nothing (white space, invisible characters alone): a
 * meeting's title is required, and as a record's required text (docs/records.md §Writing fields)
 * blanks are as good as none.
 */
export function checkTitle(title: string, param = 'fields.$title'): string {
  if (blank(title)) throw new AppError('invalid_value', '"$title" is required and cannot be blank.', { param });
  return title;
}

function instant(value: string, param: string): number {
  // The one rule of every date-time the server takes (src/lib/dates.ts, docs/errors.md §Dates).
  const ms = parseIsoDateTime(value);
  if (Number.isNaN(ms))
    throw new AppError('invalid_value', `"${param}" must be an ISO 8601 date-time with a time zone, such as 2026-03-01T09:00:00Z.`, { param });
  return ms;
}

/** Both dates as stored (UTC with milliseconds): not later than `now`, the start not after the end. */
export function checkDates(startDate: string, endDate: string, now: number): { start: string; end: string } {
  const start = instant(startDate, 'fields.$startDate');
  const end = instant(endDate, 'fields.$endDate');
  if (start > now)
    throw new AppError('invalid_value', 'Only past meetings can be created: "fields.$startDate" is later than now.', { param: 'fields.$startDate' });
  if (end > now) throw new AppError('invalid_value', 'Only past meetings can be created: "fields.$endDate" is later than now.', { param: 'fields.$endDate' });
  if (start > end) throw new AppError('invalid_value', '"fields.$startDate" is later than "fields.$endDate".', { param: 'fields.$endDate' });
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}

/**
 * The meeting's address as written, or null: a URL value, so an http or https URL with a host
 * (docs/meetings.md §Writes), never another scheme (`javascript:`, `data:`) a client would open
 * as a link.
 */
export function checkMeetingUrl(url: string | null | undefined, param = 'fields.$meetingUrl'): string | null {
  if (url === undefined || url === null) return null;
  if (!isHttpUrl(url)) throw new AppError('invalid_value', `"${param}" must be an absolute http or https URL, such as https://meet.example/abc.`, { param });
  return url;
}

/** The index of the first attendee that repeats an earlier one, ignoring case; -1 when none does. */
export function repeatedAttendee(attendees: readonly string[]): number {
  const folded = attendees.map(emailKey);
  return folded.findIndex((a, i) => folded.indexOf(a) !== i);
}

/** The organizer and attendees, each address once (ignoring case), as first written. */
export function participants(organizer: string | null, attendees: readonly string[] | null): string[] {
  const seen = new Map<string, string>();
  for (const a of [...(organizer === null ? [] : [organizer]), ...(attendees ?? [])]) if (!seen.has(emailKey(a))) seen.set(emailKey(a), a);
  const twice = repeatedAttendee(attendees ?? []);
  if (twice >= 0) {
    const param = `fields.$attendeeEmails[${twice}]`;
    throw new AppError('invalid_value', `"${param}" repeats an address of the array (ignoring case).`, { param });
  }
  return [...seen.values()];
}

/**
 * What keeps a file of the workspace from being a meeting's transcript, or null when it may be one:
 * it is COMPLETED and has purpose meeting_transcript (docs/meetings.md §Writes). The one rule of
 * the API's writes and of the import.
 */
export function transcriptRefusal(file: Pick<FileRow, 'status' | 'purpose'>): 'not_completed' | 'not_a_transcript' | null {
  // A PENDING file past its expiry is EXPIRED already (docs/design.md §Files): either way not COMPLETED.
  if (file.status !== 'COMPLETED') return 'not_completed';
  if (file.purpose !== 'meeting_transcript') return 'not_a_transcript';
  return null;
}

/** The file id if it may be the meeting's transcript: a COMPLETED `meeting_transcript` file of the workspace whose bytes the caller may have. */
export async function checkTranscript(ctx: Ctx, fileId: string, suffix: string): Promise<string> {
  const param = `relationships.$transcript${suffix}`;
  const file = await findFile(ctx.db, ctx.actor.workspaceId, fileId);
  if (!file) throw new AppError('relationship_entity_missing', `No file with id "${fileId}" exists in this workspace.`, { param });
  const refusal = transcriptRefusal(file);
  if (refusal === 'not_completed') throw new AppError('invalid_value', `The transcript must be a COMPLETED file; "${fileId}" is not.`, { param });
  if (refusal === 'not_a_transcript') {
    throw new AppError('invalid_value', `The transcript must be a file created with purpose meeting_transcript; "${fileId}" was not.`, { param });
  }
  // Linking bytes the caller may not have to a meeting it reads at FULL would hand them out
  // (docs/files.md §Who downloads the bytes).
  await checkDownload(ctx, file.id, param);
  return file.id;
}
