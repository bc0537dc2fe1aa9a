// The `meeting` import kind (docs/import.md §`meeting`, docs/meetings.md §Import): a meeting's
// fields shaped as the API returns them, checked as the API checks a create, the past-only rule
// included, and optionally its transcript, a file named by externalId and checked as the API checks
// `$transcript`. A re-import by externalId replaces every field, and the transcript when the line
// names one, and keeps the meeting's id and createdAt. The derived relationships follow from the
// participants' addresses when read: the import makes no records for them. The events are those of
// the API's create and update.
import { appendEventsJson, type Changes, type EventJsonInput } from '../changes/service.ts';
import { type FileRow, findFiles } from '../files/repository.ts';
import { fileRelationship, optionalText, typedField } from '../import/checks.ts';
import { type ImportContext, ImportError, type ImportItem, type ImportKind, onlyFields, upsertByExternalId } from '../import/kind.ts';
import type { Ctx } from '../lib/context.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { emailKey } from '../lib/email.ts';
import { isEmailFormat, isUriFormat } from '../lib/formats.ts';
import { isHttpUrl } from '../lib/http-url.ts';
import { isoNow } from '../lib/ids.ts';
import { relationshipsOf, type Derived } from './relationships.ts';
import { meetingsToChange } from './import-repository.ts';
import * as repo from './repository.ts';
import { DERIVED, LIMITS, participants, repeatedAttendee, transcriptRefusal } from './rules.ts';
import { toResource } from './service.ts';
import type { PrivacySetting } from './tables.ts';
import { blank, longerThan } from '../lib/chars.ts';

export interface MeetingInput {
  title: string;
  start: string;
  end: string;
  description: string | null;
  meetingUrl: string | null;
  organizer: string | null;
  attendees: string[] | null;
  privacy: PrivacySetting | null;
  /** The externalId of the transcript file the line names; null when it names none. */
  transcript: string | null;
}

const FIELD_TYPES: Record<string, readonly string[]> = {
  $title: ['TEXT'],
  $startDate: ['DATETIME'],
  $endDate: ['DATETIME'],
  $description: ['TEXT'],
  $meetingUrl: ['URL'],
  $organizerEmail: ['EMAIL'],
  $attendeeEmails: ['EMAIL'],
  $privacySetting: ['TEXT'],
};

/** Milliseconds of a required date-time with a time zone that names a real instant. */
function instant(where: string, v: unknown): number {
  const ms = typeof v === 'string' ? parseIsoDateTime(v) : NaN;
  if (Number.isNaN(ms))
    throw new InputError('is required: an ISO 8601 date-time with a time zone, of a real date and time, such as 2026-03-01T09:00:00Z', where);
  return ms;
}

function address(where: string, v: unknown): string {
  if (typeof v !== 'string' || longerThan(v, LIMITS.address) || !isEmailFormat(v))
    throw new InputError(`must be an e-mail address of at most ${LIMITS.address} characters`, where);
  return v;
}

function attendees(v: unknown): string[] | null {
  const where = 'fields.$attendeeEmails.value';
  if (v === undefined || v === null) return null;
  // A multi-valued EMAIL field: one address is a list of one, as a record's are (docs/import.md).
  if (typeof v === 'string') return [address(where, v)];
  if (!Array.isArray(v)) throw new InputError('must be an e-mail address or an array of them', where);
  if (v.length > LIMITS.attendees) throw new InputError(`must hold at most ${LIMITS.attendees} addresses`, where);
  const out = v.map((a, i) => address(`${where}[${i}]`, a));
  const twice = repeatedAttendee(out);
  if (twice >= 0) throw new InputError('repeats an address of the array (ignoring case)', `${where}[${twice}]`);
  return out;
}

function privacy(v: unknown): PrivacySetting | null {
  if (v === undefined || v === null) return null;
  if (v !== 'FULL' && v !== 'METADATA') throw new InputError('must be FULL, METADATA or null', 'fields.$privacySetting.value');
  return v;
}

/**
 * The line's one importable relationship, `$transcript`: the externalId of one file, or null when
 * the line names none. The others are derived when read; a transcript is replaced, never removed,
 * as through the API (docs/meetings.md §Writes), so a line names exactly one.
 */
function transcriptOf(raw: Record<string, unknown>): string | null {
  const rels = raw.relationships;
  if (typeof rels === 'object' && rels !== null && !Array.isArray(rels)) {
    for (const key of Object.keys(rels)) {
      if (DERIVED.includes(key)) throw new InputError("is derived from the participants' addresses when read and cannot be imported", `relationships.${key}`);
    }
  }
  const files = fileRelationship(raw, '$transcript', 'meetings');
  if (files === null) return null;
  if (files.length !== 1) throw new InputError('must hold one file externalId: a meeting has one transcript', 'relationships.$transcript.values');
  return files[0] as string;
}

export function checkMeeting(raw: Record<string, unknown>): MeetingInput {
  onlyFields(raw, ['fields', 'relationships']);
  const transcript = transcriptOf(raw);
  const fields = raw.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new InputError('must be an object', 'fields');
  const f = fields as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!Object.hasOwn(FIELD_TYPES, k)) throw new InputError('is not a meeting field', `fields.${k}`);
  const value = (name: string) => typedField(f, FIELD_TYPES, name)?.value;
  const title = optionalText('fields.$title.value', value('$title'), LIMITS.title);
  // Required, and white space or invisible characters alone are as good as none, as the API holds a create (rules.ts, checkTitle).
  if (title === null || blank(title))
    throw new InputError(`is required: a string of 1 to ${LIMITS.title} characters, not white space or invisible characters alone`, 'fields.$title.value');
  const start = instant('fields.$startDate.value', value('$startDate'));
  const end = instant('fields.$endDate.value', value('$endDate'));
  if (end < start) throw new InputError('is earlier than fields.$startDate', 'fields.$endDate.value');
  // Rolodex records meetings, it does not schedule them (docs/meetings.md): one not over yet is refused, as the API refuses it.
  if (end > Date.now()) throw new InputError('is later than now: only meetings that are over can be imported', 'fields.$endDate.value');
  const url = optionalText('fields.$meetingUrl.value', value('$meetingUrl'), LIMITS.meetingUrl);
  // An absolute URI (the create's schema) and a URL value (rules.ts, checkMeetingUrl), as the API holds a create.
  if (url !== null && !(isUriFormat(url) && isHttpUrl(url))) throw new InputError('must be an absolute http or https URL', 'fields.$meetingUrl.value');
  const organizer = value('$organizerEmail');
  return {
    title,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    description: optionalText('fields.$description.value', value('$description'), LIMITS.description),
    meetingUrl: url,
    organizer: organizer === undefined || organizer === null ? null : address('fields.$organizerEmail.value', organizer),
    attendees: attendees(value('$attendeeEmails')),
    privacy: privacy(value('$privacySetting')),
    transcript,
  };
}

function rowOf(workspaceId: string, id: string, externalId: string | null, v: MeetingInput, createdAt: string, at: string): repo.MeetingRow {
  return {
    id,
    workspace_id: workspaceId,
    external_id: externalId,
    title: v.title,
    start_date: v.start,
    end_date: v.end,
    meeting_url: v.meetingUrl,
    organizer_email: v.organizer,
    attendee_emails: v.attendees === null ? null : JSON.stringify(v.attendees),
    privacy_setting: v.privacy,
    created_at: createdAt,
    updated_at: at,
  };
}

interface Written {
  row: repo.MeetingRow;
  contents: repo.ContentsRow;
  /** Of an update: the fields it changed. */
  changes?: Changes;
}

const NO_DERIVED: Derived = { contact: [], account: [], opportunity: [] };

/** The fields and the transcript that differ between two states of a meeting, as the API shows them and its update names them. */
function changesOf(ctx: Ctx, before: Written, after: Written): Changes {
  const shown = (w: Written) => toResource(ctx, w.row, 'FULL', w.contents, NO_DERIVED);
  const [from, to] = [shown(before), shown(after)];
  const changes: Changes = {};
  for (const key of Object.keys(to.fields) as Array<keyof typeof to.fields>) {
    const [a, b] = [from.fields[key].value, to.fields[key].value];
    if (JSON.stringify(a) !== JSON.stringify(b)) changes[key] = { from: a, to: b };
  }
  const [a, b] = [from.relationships.$transcript.values, to.relationships.$transcript.values];
  if (a[0] !== b[0]) changes.$transcript = { from: a, to: b };
  return changes;
}

/**
 * The transcript file id of each line that names one (by the line's externalId), checked as the
 * API checks `$transcript`: a file of this import or of the workspace, COMPLETED, of purpose
 * meeting_transcript (docs/meetings.md §Writes). Every file of the import is written before the
 * first meeting (docs/import.md §`meeting`), so a file on any line of the file is found.
 */
async function transcriptsOf(ctx: ImportContext, items: ImportItem<MeetingInput>[]): Promise<Map<string, string>> {
  const field = 'relationships.$transcript.values[0]';
  const ids = new Map<string, string>();
  for (const { line, externalId, value } of items) {
    if (value.transcript !== null) ids.set(externalId, await ctx.resolve('file', value.transcript, { line, field }));
  }
  const files = await findFiles(ctx.db, ctx.actor.workspaceId, [...ids.values()]);
  for (const { line, externalId, value } of items) {
    const id = ids.get(externalId);
    // The file exists: resolve found it, in the workspace or among the files this import wrote.
    const refusal = id === undefined ? null : transcriptRefusal(files.get(id) as FileRow);
    if (refusal === 'not_completed') throw new ImportError(line, field, `file "${value.transcript}" is not COMPLETED: a transcript is a COMPLETED file`);
    if (refusal === 'not_a_transcript') {
      throw new ImportError(line, field, `file "${value.transcript}" has no purpose meeting_transcript: only such a file can be a transcript`);
    }
  }
  return ids;
}

export const meetingKind: ImportKind<MeetingInput> = {
  object: 'meeting',
  check: checkMeeting,
  references: (_ctx, { value }) =>
    value.transcript === null ? [] : [{ object: 'file', externalId: value.transcript, field: 'relationships.$transcript.values[0]' }],
  async lookup(ctx, externalIds) {
    const rows = await repo.meetingsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds);
    return new Map([...rows].map(([ext, row]) => [ext, row.id]));
  },
  async upsert(ctx, items) {
    const ws = ctx.actor.workspaceId;
    const at = isoNow(ctx.now);
    const fresh: repo.NewMeeting[] = [];
    const written: Written[] = [];
    const folded = (v: MeetingInput) => participants(v.organizer, v.attendees).map(emailKey);
    const transcripts = await transcriptsOf(ctx, items);
    await upsertByExternalId(ctx, items, {
      object: 'meeting',
      idKind: 'mtg',
      // Locked as read: what the line changes is judged against the meeting as the last writer left
      // it, and no writer changes it before the import commits (docs/import.md §Sharing the database).
      find: (externalIds) => meetingsToChange(ctx.db, ws, externalIds),
      async update({ externalId, value }, old, id) {
        const { description: oldDescription, transcript_id, ...oldRow } = old;
        const before = { row: oldRow, contents: { meeting_id: id, description: oldDescription, transcript_id } };
        // A line that names no transcript keeps the meeting's: nothing removes a transcript.
        const contents = { meeting_id: id, description: value.description, transcript_id: transcripts.get(externalId) ?? transcript_id };
        // A meeting named by its id (one without an externalId, docs/import.md §Export) keeps none.
        const after = { row: rowOf(ws, id, oldRow.external_id, value, old.created_at, at), contents };
        const changes = changesOf(ctx, before, after);
        // A line that changes nothing writes nothing and leaves updatedAt alone, as the API's update does.
        if (Object.keys(changes).length === 0) return;
        after.row.updated_at = await repo.replaceMeeting(ctx.db, oldRow, after.row, contents, folded(value));
        written.push({ ...after, changes });
      },
      insert({ externalId, value }, id) {
        const contents = { meeting_id: id, description: value.description, transcript_id: transcripts.get(externalId) ?? null };
        const w = { row: rowOf(ws, id, externalId, value, at, at), contents };
        fresh.push({ ...w, participants: folded(value) });
        written.push(w);
      },
    });
    await repo.insertMeetings(ctx.db, ws, fresh);
    if (written.length === 0) return;
    // The events' objects are the meetings as a full-access key reads them now, derived relationships included.
    const derived = await relationshipsOf(
      ctx,
      written.map((w) => w.row),
    );
    // Each event carries the updatedAt its write gave the meeting (docs/events.md §Shape).
    const events: EventJsonInput[] = written.map((w) => {
      const object = toResource(ctx, w.row, 'FULL', w.contents, derived.get(w.row.id) ?? NO_DERIVED);
      const event = { objectId: object.id, json: JSON.stringify(object), at: w.row.updated_at };
      return w.changes ? { ...event, type: 'meeting.updated', changes: w.changes } : { ...event, type: 'meeting.created' };
    });
    await appendEventsJson(ctx, events, (kind) => ctx.newId(kind));
  },
};
