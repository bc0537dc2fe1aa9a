// The `meeting` import kind (docs/import.md §`meeting`, docs/meetings.md §Import): a meeting's
// fields shaped as the API returns them, checked as the API checks a create, the past-only rule
// included. A re-import by externalId replaces every field and keeps the meeting's id, createdAt and
// transcript. The derived relationships follow from the participants' addresses when read: the
// import makes no records for them. The events are those of the API's create and update.
import { appendEvents, type Changes, type EventInput } from '../changes/service.ts';
import { optionalText, typedField } from '../import/checks.ts';
import { type ImportKind, onlyFields, upsertByExternalId } from '../import/kind.ts';
import type { Ctx } from '../lib/context.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { foldText } from '../lib/fold.ts';
import { isEmailFormat, isUriFormat } from '../lib/formats.ts';
import { isoNow } from '../lib/ids.ts';
import { relationshipsOf, type Derived } from './relationships.ts';
import * as repo from './repository.ts';
import { DERIVED, LIMITS, participants, repeatedAttendee } from './rules.ts';
import { toResource } from './service.ts';
import type { PrivacySetting } from './tables.ts';

export interface MeetingInput {
  title: string;
  start: string;
  end: string;
  description: string | null;
  meetingUrl: string | null;
  organizer: string | null;
  attendees: string[] | null;
  privacy: PrivacySetting | null;
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
  if (typeof v !== 'string' || v.length > LIMITS.address || !isEmailFormat(v))
    throw new InputError(`must be an e-mail address of at most ${LIMITS.address} characters`, where);
  return v;
}

function attendees(v: unknown): string[] | null {
  const where = 'fields.$attendeeEmails.value';
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) throw new InputError('must be an array of e-mail addresses', where);
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

/** A line has no relationships: the transcript is a file link, which the import does not make, and the others are derived. */
function noRelationships(v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'object' || Array.isArray(v)) throw new InputError('must be an object', 'relationships');
  for (const key of Object.keys(v)) {
    const where = `relationships.${key}`;
    if (DERIVED.includes(key)) throw new InputError("is derived from the participants' addresses when read and cannot be imported", where);
    if (key === '$transcript') throw new InputError('is not imported: a transcript is a file, and the import links no files to meetings', where);
    throw new InputError('is not a relationship of meetings', where);
  }
}

export function checkMeeting(raw: Record<string, unknown>): MeetingInput {
  onlyFields(raw, ['fields', 'relationships']);
  noRelationships(raw.relationships);
  const fields = raw.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new InputError('must be an object', 'fields');
  const f = fields as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!(k in FIELD_TYPES)) throw new InputError('is not a meeting field', `fields.${k}`);
  const value = (name: string) => typedField(f, FIELD_TYPES, name)?.value;
  const title = optionalText('fields.$title.value', value('$title'), LIMITS.title);
  if (title === null || title === '') throw new InputError(`is required: a string of 1 to ${LIMITS.title} characters`, 'fields.$title.value');
  const start = instant('fields.$startDate.value', value('$startDate'));
  const end = instant('fields.$endDate.value', value('$endDate'));
  if (end < start) throw new InputError('is earlier than fields.$startDate', 'fields.$endDate.value');
  // Rolodex records meetings, it does not schedule them (docs/meetings.md): one not over yet is refused, as the API refuses it.
  if (end > Date.now()) throw new InputError('is later than now: only meetings that are over can be imported', 'fields.$endDate.value');
  const url = optionalText('fields.$meetingUrl.value', value('$meetingUrl'), LIMITS.meetingUrl);
  if (url !== null && !isUriFormat(url)) throw new InputError('must be an absolute URI', 'fields.$meetingUrl.value');
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
  };
}

function rowOf(workspaceId: string, id: string, externalId: string, v: MeetingInput, createdAt: string, at: string): repo.MeetingRow {
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

/** The fields that differ between two states of a meeting, as the API shows them. */
function fieldChanges(ctx: Ctx, before: Written, after: Written): Changes {
  const fieldsOf = (w: Written) => toResource(ctx, w.row, 'FULL', w.contents, NO_DERIVED).fields;
  const [from, to] = [fieldsOf(before), fieldsOf(after)];
  const changes: Changes = {};
  for (const key of Object.keys(to) as Array<keyof typeof to>) {
    if (JSON.stringify(from[key].value) !== JSON.stringify(to[key].value)) changes[key] = { from: from[key].value, to: to[key].value };
  }
  return changes;
}

export const meetingKind: ImportKind<MeetingInput> = {
  object: 'meeting',
  check: checkMeeting,
  async lookup(ctx, externalIds) {
    const rows = await repo.meetingsByExternalId(ctx.db, ctx.actor.workspaceId, externalIds);
    return new Map([...rows].map(([ext, row]) => [ext, row.id]));
  },
  async upsert(ctx, items) {
    const ws = ctx.actor.workspaceId;
    const at = isoNow(ctx.now);
    const fresh: repo.NewMeeting[] = [];
    const written: Written[] = [];
    const folded = (v: MeetingInput) => participants(v.organizer, v.attendees).map(foldText);
    await upsertByExternalId(ctx, items, {
      object: 'meeting',
      idKind: 'mtg',
      find: (externalIds) => repo.meetingsByExternalId(ctx.db, ws, externalIds),
      async update({ externalId, value }, old, id) {
        const { description: oldDescription, transcript_id, ...oldRow } = old;
        const before = { row: oldRow, contents: { meeting_id: id, description: oldDescription, transcript_id } };
        const after = { row: rowOf(ws, id, externalId, value, old.created_at, at), contents: { ...before.contents, description: value.description } };
        const changes = fieldChanges(ctx, before, after);
        // A line that changes nothing writes nothing and leaves updatedAt alone, as the API's update does.
        if (Object.keys(changes).length === 0) return;
        await repo.replaceMeeting(ctx.db, oldRow, after.row, value.description, folded(value));
        written.push({ ...after, changes });
      },
      insert({ externalId, value }, id) {
        const w = { row: rowOf(ws, id, externalId, value, at, at), contents: { meeting_id: id, description: value.description, transcript_id: null } };
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
    const events: EventInput[] = written.map((w) => {
      const object = toResource(ctx, w.row, 'FULL', w.contents, derived.get(w.row.id) ?? NO_DERIVED);
      return w.changes ? { type: 'meeting.updated', object, changes: w.changes } : { type: 'meeting.created', object };
    });
    await appendEvents(ctx, events, (kind) => ctx.newId(kind));
  },
};
