// The meetings of `rolodex demo`: one Ann organized with Bob and Hank of Globex (a contact, so the
// derived relationships show), private to its attendees (METADATA for everyone else), and one
// open to the workspace with an attendee nobody knows yet, made a contact by autoCreateRecords.
import type { DemoPart } from '../import/demo-part.ts';
import { createMeeting } from './service.ts';
import { write } from '../db/index.ts';

const DAY = 86_400_000;

export const meetingsPart: DemoPart = {
  async after(ctx) {
    const at = (days: number, hours: number) => new Date(Date.parse('2026-02-02T09:00:00.000Z') + days * DAY + hours * 3_600_000).toISOString();
    const made = await write(ctx.db, async (tx) => {
      const c = { ...ctx, db: tx };
      const board = await createMeeting(c, {
        fields: {
          $title: 'Globex renewal review',
          $startDate: at(0, 0),
          $endDate: at(0, 1),
          $description: 'Pricing options for the Globex renewal; discount ceiling 15%.',
          $organizerEmail: 'ann@acme.test',
          $attendeeEmails: ['bob@acme.test', 'hank@globex.example'],
          $privacySetting: 'METADATA',
        },
      });
      const intro = await createMeeting(c, {
        fields: { $title: 'Intro call', $startDate: at(3, 5), $endDate: at(3, 6), $organizerEmail: 'bob@acme.test', $attendeeEmails: ['nora@newco.example'] },
        autoCreateRecords: true,
      });
      return [board.id, intro.id];
    });
    const h = '-H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01"';
    return [
      `curl -s ${h} {base}/v1/meetings`,
      `curl -s ${h} {base}/v1/meetings/${made[0]}   # FULL for Ann, its organizer (this key); METADATA, without the description, for a workspace key`,
    ];
  },
};
