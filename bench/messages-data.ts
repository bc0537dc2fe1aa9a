// Bulk data for the message benchmark: channels of every visibility, one caller's memberships,
// and N messages spread at random over channels and a year. Written straight into the tables
// (the importer is not what is measured here), then the kept counts and planner statistics.
import { randomInt } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { newId } from '../src/lib/ids.ts';

export interface Shape {
  channels: number;
  public: number;
  restricted: number;
  messages: number;
  /** Channels the caller is a member of, drawn from every visibility. */
  memberOf: number;
}

export interface Generated {
  channels: Array<{ id: string; visibility: string }>;
  memberChannels: string[];
}

const YEAR = 365 * 24 * 3600 * 1000;
const BASE = Date.parse('2025-03-01T00:00:00.000Z');

export function channelsFor(shape: Shape): Generated {
  const channels = Array.from({ length: shape.channels }, (_, i) => ({
    id: newId('chn', BASE + i),
    visibility: i < shape.public ? 'public' : i < shape.public + shape.restricted ? 'restricted' : 'private',
  }));
  // Every 25th channel: 200 of 5,000, in proportion to the visibilities.
  const step = Math.floor(shape.channels / shape.memberOf);
  const memberChannels = channels
    .filter((_, i) => i % step === 0)
    .slice(0, shape.memberOf)
    .map((c) => c.id);
  return { channels, memberChannels };
}

function* messageBatches(shape: Shape, gen: Generated, size: number) {
  for (let done = 0; done < shape.messages; done += size) {
    const batch = [];
    for (let i = done; i < Math.min(done + size, shape.messages); i++) {
      // Seconds resolution over a year: plenty of equal $sentAt values to exercise the id tie-break.
      const sent = BASE + Math.floor(randomInt(YEAR) / 1000) * 1000;
      const ch = gen.channels[randomInt(gen.channels.length)] as { id: string; visibility: string };
      batch.push({ id: newId('msg', BASE + i), channel: ch.id, vis: ch.visibility, sent: new Date(sent).toISOString(), text: `message ${i} text` });
    }
    yield batch;
  }
}

const NOW = '2026-03-01T00:00:00.000Z';

export function loadSqlite(file: string, ws: string, user: string, shape: Shape, gen: Generated): void {
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;');
  db.exec('begin');
  const ch = db.prepare(
    `insert into channels (id, workspace_id, external_id, provider, name, visibility, message_count, created_at, updated_at) values (?, ?, null, 'slack', ?, ?, 0, ?, ?)`,
  );
  for (const c of gen.channels) ch.run(c.id, ws, c.id, c.visibility, NOW, NOW);
  const mem = db.prepare(`insert into channel_members (channel_id, user_id, created_at) values (?, ?, ?)`);
  for (const c of gen.memberChannels) mem.run(c, user, NOW);
  const m = db.prepare(
    `insert into messages (id, workspace_id, channel_id, channel_visibility, external_id, sent_at, edited_at, provider, provider_thread_id, text_type, created_at, updated_at) values (?, ?, ?, ?, null, ?, null, 'slack', null, 'TEXT', ?, ?)`,
  );
  const t = db.prepare(`insert into message_texts (message_id, text) values (?, ?)`);
  for (const batch of messageBatches(shape, gen, 10_000)) {
    for (const r of batch) {
      m.run(r.id, ws, r.channel, r.vis, r.sent, NOW, NOW);
      t.run(r.id, r.text);
    }
  }
  db.exec(`update channels set message_count = (select count(*) from messages where channel_id = channels.id) where workspace_id = '${ws}'`);
  db.exec('commit');
  db.exec('ANALYZE');
  db.close();
}

export async function loadPostgres(url: string, schema: string, ws: string, user: string, shape: Shape, gen: Generated): Promise<void> {
  const c = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await c.connect();
  try {
    await c.query(
      `insert into channels (id, workspace_id, external_id, provider, name, visibility, message_count, created_at, updated_at)
       select id, $1, null, 'slack', id, vis, 0, $2, $2 from unnest($3::text[], $4::text[]) as u(id, vis)`,
      [ws, NOW, gen.channels.map((x) => x.id), gen.channels.map((x) => x.visibility)],
    );
    await c.query(`insert into channel_members (channel_id, user_id, created_at) select id, $1, $2 from unnest($3::text[]) as u(id)`, [
      user,
      NOW,
      gen.memberChannels,
    ]);
    for (const batch of messageBatches(shape, gen, 20_000)) {
      await c.query(
        `insert into messages (id, workspace_id, channel_id, channel_visibility, external_id, sent_at, edited_at, provider, provider_thread_id, text_type, created_at, updated_at)
         select id, $1, ch, vis, null, sent, null, 'slack', null, 'TEXT', $2, $2 from unnest($3::text[], $4::text[], $5::text[], $6::text[]) as u(id, ch, vis, sent)`,
        [ws, NOW, batch.map((r) => r.id), batch.map((r) => r.channel), batch.map((r) => r.vis), batch.map((r) => r.sent)],
      );
      await c.query(`insert into message_texts (message_id, text) select * from unnest($1::text[], $2::text[])`, [
        batch.map((r) => r.id),
        batch.map((r) => r.text),
      ]);
    }
    await c.query(`update channels set message_count = (select count(*) from messages where channel_id = channels.id) where workspace_id = $1`, [ws]);
    // Index-only scans need the visibility map that VACUUM writes; a long-lived table has it.
    await c.query('vacuum analyze');
  } finally {
    await c.end();
  }
}
