// Meetings (docs/meetings.md): create (past only), retrieve, list, update (privacy and transcript).
// Access is resolved per caller and meeting: organizer or attendee user → FULL; anyone else → the
// meeting's privacy setting. A meeting's description and transcript are read from storage only
// for meetings the caller sees at FULL.
import type { Static } from '@sinclair/typebox';
import { appendEvent, type Changes } from '../changes/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { emailKey } from '../lib/email.ts';
import { laterIso } from '../lib/dates.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { createMissingContacts } from './contacts.ts';
import { checkCreateKeys, checkDates, checkMeetingUrl, checkTitle, checkTranscript, checkUpdateKeys, participants } from './rules.ts';
import * as repo from './repository.ts';
import { relationshipsOf, type Derived } from './relationships.ts';
import type { CreateMeetingBody, UpdateMeetingBody } from './schemas.ts';

type AccessLevel = 'FULL' | 'METADATA';

/** The caller's folded address: a user key's (undefined for a workspace key or a user of no account here). */
async function callerEmail(ctx: Ctx): Promise<string | undefined> {
  return ctx.actor.userId === null ? undefined : repo.userEmail(ctx.db, ctx.actor.workspaceId, ctx.actor.userId);
}

/** Each row's access level for the caller on a page (repo.pageFullAccess). */
async function pageAccess(ctx: Ctx, rows: readonly repo.MeetingRow[], email: string | undefined): Promise<Map<string, AccessLevel>> {
  const full = await repo.pageFullAccess(ctx.db, rows, email);
  return new Map(rows.map((r) => [r.id, full.has(r.id) ? 'FULL' : 'METADATA']));
}

/** Each row's access level for the caller, by the rule's one statement (repo.fullAccessOf). */
async function accessOf(ctx: Ctx, rows: readonly repo.MeetingRow[], email: string | undefined): Promise<Map<string, AccessLevel>> {
  const full = await repo.fullAccessOf(ctx.db, rows, email);
  return new Map(rows.map((r) => [r.id, full.has(r.id) ? 'FULL' : 'METADATA']));
}

// Independent reads run at once (on PostgreSQL, on pooled connections side by side): the derived
// relationships alongside the access level, and the contents of the FULL rows as soon as the access
// level is known. The contents are asked only for those rows.
async function toResources(ctx: Ctx, rows: readonly repo.MeetingRow[], email: string | undefined) {
  const accessing = pageAccess(ctx, rows, email);
  const [access, contents, derived] = await Promise.all([
    accessing,
    accessing.then((a) =>
      repo.contentsOf(
        ctx.db,
        rows.filter((r) => a.get(r.id) === 'FULL').map((r) => r.id),
      ),
    ),
    relationshipsOf(ctx, rows),
  ]);
  return rows.map((r) => toResource(ctx, r, access.get(r.id) as AccessLevel, contents.get(r.id), derived.get(r.id) as Derived));
}

export function toResource(ctx: Ctx, r: repo.MeetingRow, access: AccessLevel, contents: repo.ContentsRow | undefined, derived: Derived) {
  const full = access === 'FULL';
  const transcript = full ? (contents?.transcript_id ?? null) : null;
  return {
    id: r.id,
    objectType: 'meeting' as const,
    accessLevel: access,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    httpLink: ctx.links.http('meetings', r.id),
    externalId: r.external_id,
    fields: {
      $title: { value: r.title, valueType: 'TEXT' as const },
      $startDate: { value: r.start_date, valueType: 'DATETIME' as const },
      $endDate: { value: r.end_date, valueType: 'DATETIME' as const },
      $description: { value: full ? (contents?.description ?? null) : null, valueType: 'TEXT' as const },
      $meetingUrl: { value: r.meeting_url, valueType: 'URL' as const },
      $organizerEmail: { value: r.organizer_email, valueType: 'EMAIL' as const },
      $attendeeEmails: { value: r.attendee_emails === null ? null : (JSON.parse(r.attendee_emails) as string[]), valueType: 'EMAIL' as const },
      $privacySetting: { value: r.privacy_setting, valueType: 'TEXT' as const },
    },
    relationships: {
      $transcript: { cardinality: 'has_one' as const, objectType: 'file' as const, values: transcript === null ? [] : [transcript] },
      $contact: { cardinality: 'has_many' as const, objectType: 'contact' as const, values: derived.contact },
      $account: { cardinality: 'has_many' as const, objectType: 'account' as const, values: derived.account },
      $opportunity: { cardinality: 'has_many' as const, objectType: 'opportunity' as const, values: derived.opportunity },
    },
  };
}

export async function listMeetings(ctx: Ctx, input: Page) {
  const [{ rows, total }, email] = await Promise.all([repo.pageMeetings(ctx.db, ctx.actor.workspaceId, input), callerEmail(ctx)]);
  return envelope(await toResources(ctx, rows, email), total);
}

export async function getMeeting(ctx: Ctx, input: { id: string }) {
  const [row, email] = await Promise.all([repo.findMeeting(ctx.db, ctx.actor.workspaceId, input.id), callerEmail(ctx)]);
  if (!row) throw notFound('meeting', input.id);
  return (await toResources(ctx, [row], email))[0] as ReturnType<typeof toResource>;
}

export type CreateMeetingInput = Static<typeof CreateMeetingBody>;

export async function createMeeting(ctx: WriteCtx, input: CreateMeetingInput) {
  checkCreateKeys(input);
  const f = input.fields;
  const title = checkTitle(f.$title);
  const { start, end } = checkDates(f.$startDate, f.$endDate, ctx.now);
  const meetingUrl = checkMeetingUrl(f.$meetingUrl);
  const attendees = typeof f.$attendeeEmails === 'string' ? [f.$attendeeEmails] : f.$attendeeEmails;
  const addresses = participants(f.$organizerEmail ?? null, attendees ?? null);
  const raw = input.relationships?.$transcript;
  const transcriptId =
    raw === undefined ? null : await checkTranscript(ctx, typeof raw === 'string' ? raw : (raw[0] as string), typeof raw === 'string' ? '' : '[0]');
  const at = isoNow(ctx.now);
  const row: repo.MeetingRow = {
    id: newId('mtg', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    external_id: null,
    title,
    start_date: start,
    end_date: end,
    meeting_url: meetingUrl,
    organizer_email: f.$organizerEmail ?? null,
    attendee_emails: attendees === undefined || attendees === null ? null : JSON.stringify(attendees),
    privacy_setting: f.$privacySetting ?? null,
    created_at: at,
    updated_at: at,
  };
  await repo.insertMeeting(ctx.db, row, { meeting_id: row.id, description: f.$description ?? null, transcript_id: transcriptId }, addresses.map(emailKey));
  if (input.autoCreateRecords === true) await createMissingContacts(ctx, addresses);
  await appendEvent(ctx, { type: 'meeting.created', object: await fullResource(ctx, row.id) });
  return getMeeting(ctx, { id: row.id });
}

/** The meeting as a full-access key reads it: what its events carry (docs/events.md). */
async function fullResource(ctx: Ctx, id: string) {
  const row = (await repo.findMeeting(ctx.db, ctx.actor.workspaceId, id)) as repo.MeetingRow;
  const [contents, derived] = await Promise.all([repo.contentsOf(ctx.db, [id]), relationshipsOf(ctx, [row])]);
  return toResource(ctx, row, 'FULL', contents.get(id), derived.get(id) as Derived);
}

export type UpdateMeetingInput = { id: string } & Static<typeof UpdateMeetingBody>;

export async function updateMeeting(ctx: WriteCtx, input: UpdateMeetingInput) {
  checkUpdateKeys(input);
  const row = await repo.findMeetingToChange(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('meeting', input.id);
  if ((await accessOf(ctx, [row], await callerEmail(ctx))).get(row.id) !== 'FULL') {
    throw new AppError('full_access_required', 'Updating a meeting needs FULL access to it; this key has METADATA access.');
  }
  const privacy = input.fields?.$privacySetting;
  const replace = input.relationships?.$transcript?.replace;
  const transcriptId = replace === undefined ? undefined : await checkTranscript(ctx, replace, '.replace');
  const changes: Changes = {};
  if (privacy !== undefined && privacy !== row.privacy_setting) {
    await repo.updateMeeting(ctx.db, row.id, { privacy_setting: privacy });
    changes.$privacySetting = { from: row.privacy_setting, to: privacy };
  }
  const transcriptBefore = transcriptId === undefined ? undefined : await repo.transcriptOf(ctx.db, row.id);
  if (transcriptId !== undefined && transcriptId !== transcriptBefore) {
    await repo.setTranscript(ctx.db, row.id, transcriptId);
    changes.$transcript = { from: transcriptBefore ? [transcriptBefore] : [], to: transcriptId ? [transcriptId] : [] };
  }
  // An update that changes nothing leaves updatedAt alone (docs/meetings.md).
  if (Object.keys(changes).length > 0) {
    // Never earlier than the stored time, under the row's lock (docs/records.md §Times of writes);
    // the event carries it too (docs/events.md §Shape).
    const at = laterIso(isoNow(ctx.now), row.updated_at);
    await repo.updateMeeting(ctx.db, row.id, { updated_at: at });
    await appendEvent({ ...ctx, now: Date.parse(at) }, { type: 'meeting.updated', object: await fullResource(ctx, row.id), changes });
  }
  return getMeeting(ctx, { id: row.id });
}
