// A dispatcher that loses its lease while alive must not send what another dispatcher took, on
// both databases (docs/emails.md §Delivery). Dispatcher A's claim answers late, after its lease
// has ended (a slow or cold database connection, a process starved of CPU: what made two
// instances deliver some messages twice under load); meanwhile dispatcher B claims the rows and
// delivers them. Each message must still arrive exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { type Dispatcher, messageIdOf, startMailDispatcher } from '../../src/jobs/mail-dispatcher.ts';
import type { MailTransport } from '../../src/mail/transport.ts';
import { call, eachDialect } from '../helpers/app.ts';
import { type EmailWorld, seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { eventually } from '../helpers/smtp.ts';

const LEASE_MS = 1000;

/** Holds back the answer of the first claim (a result with lease_owner) by `ms`. */
function lateClaim(ms: number): KyselyPlugin & { claimed: Promise<void> } {
  let armed = true;
  let signal = () => {};
  const claimed = new Promise<void>((resolve) => (signal = resolve));
  return {
    claimed,
    transformQuery: (args) => args.node,
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (armed && args.result.rows[0] && 'lease_owner' in args.result.rows[0]) {
        armed = false;
        signal();
        await new Promise((r) => setTimeout(r, ms));
      }
      return args.result;
    },
  };
}

function recorder(sent: string[]): MailTransport {
  return {
    kind: 'smtp',
    async send(mail) {
      sent.push(mail.messageId);
    },
    async close() {},
  };
}

eachDialect('e-mail lease', (ctx) => {
  let w: EmailWorld;
  const dispatchers: Dispatcher[] = [];
  before(async () => {
    w = await seedEmailWorld(ctx());
  });
  after(async () => {
    for (const d of dispatchers) await d.stop();
  });

  test('a claim answered after its lease ended sends nothing another dispatcher took', async () => {
    const t = ctx();
    const ids: string[] = [];
    for (const subject of ['late 1', 'late 2', 'late 3']) {
      assert.equal((await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.full, { subject }))).statusCode, 200);
      ids.push((await t.deps.db.kysely.selectFrom('emails').select('id').where('subject', '=', subject).executeTakeFirstOrThrow()).id);
    }
    const mail = { ...t.config.mail, leaseMs: LEASE_MS, pollMs: 20, concurrency: 1 };
    const sentByA: string[] = [];
    const sentByB: string[] = [];
    const late = lateClaim(LEASE_MS * 2);
    const base = { blobs: t.deps.blobs, logger: t.deps.logger, mail };
    dispatchers.push(startMailDispatcher({ ...base, db: { ...t.deps.db, kysely: t.deps.db.kysely.withPlugin(late) }, transport: recorder(sentByA) }));
    await late.claimed;
    dispatchers.push(startMailDispatcher({ ...base, db: t.deps.db, transport: recorder(sentByB) }));
    const messageIds = ids.map((id) => messageIdOf(id, w.addresses.full));
    const copies = (m: string) => [...sentByA, ...sentByB].filter((x) => x === m).length;
    await eventually('all delivered', () => messageIds.every((m) => copies(m) >= 1), 15_000);
    await eventually('outbox empty', async () => (await t.deps.db.kysely.selectFrom('email_outbox').selectAll().execute()).length === 0, 15_000);
    // A's claim has answered by now, and a second copy would have been sent right after it.
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    assert.deepEqual(
      messageIds.map(copies),
      messageIds.map(() => 1),
      `A sent ${sentByA.length}, B sent ${sentByB.length}`,
    );
  });
});
