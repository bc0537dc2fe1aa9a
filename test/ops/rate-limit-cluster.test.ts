// Limits kept by the cluster primary (docs/design.md §Rate limits): a worker asks once per bucket
// and turn, gets the decisions of calls in a row, leases a fast bucket's tokens, and decides alone
// when the primary does not answer. The IPC channel is played by a pair of in-process ends, so the
// primary's code and the worker's run as they do across processes.
import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { describe, test } from 'node:test';
import { takeMany } from '../../src/rate-limit/bucket.ts';
import { type Channel, ClusterRateLimiter, serveClusterRateLimits } from '../../src/rate-limit/cluster.ts';
import { Leases } from '../../src/rate-limit/lease.ts';

/** A worker's channel to a primary serving `serveClusterRateLimits`; `sent` records each request. */
function wired(answer = true) {
  const sent: { n: number; extra: number; give: number }[] = [];
  let toPrimary: ((w: Worker, m: unknown) => void) | undefined;
  const listeners = new Set<(m: unknown) => void>();
  // Only what the primary's side calls on a worker.
  const worker = { isConnected: () => true, send: (m: unknown) => setImmediate(() => listeners.forEach((fn) => fn(structuredClone(m)))) };
  serveClusterRateLimits({ on: (_e, fn) => (toPrimary = fn) });
  const channel: Channel = {
    connected: true,
    send: (m) => {
      sent.push({ n: m.n, extra: m.extra, give: m.give });
      if (answer) setImmediate(() => toPrimary?.(worker as unknown as Worker, structuredClone(m)));
    },
    on: (_e, fn) => listeners.add(fn),
    off: (_e, fn) => listeners.delete(fn),
  };
  return { channel, sent };
}

describe('limits kept by the cluster primary', () => {
  test('one message per bucket and turn, with the decisions of calls in a row', async () => {
    const { channel, sent } = wired();
    const l = new ClusterRateLimiter({ Read: 2, Write: 2, Search: 2 }, 10, channel);
    const ds = await Promise.all([...Array.from({ length: 5 }, () => Promise.resolve(l.consume('ws_1', 'Read'))), Promise.resolve(l.consume('ws_1', 'Write'))]);
    assert.deepEqual(
      ds.map((d) => [d?.allowed, d?.remaining]),
      [
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
        [false, 0],
        [true, 1],
      ],
    );
    assert.deepEqual(sent.map((s) => s.n).sort(), [1, 5], 'a bucket of 2/s leases nothing');
    await l.close();
  });

  test('a fast bucket is leased: 20 requests in 5 messages', async () => {
    const { channel, sent } = wired();
    // Leases of 100 ms (up to 100 tokens), so that a machine stalling between two requests, as a
    // loaded one may for a few ms, does not end a lease early: leases of 1, 2, 4, 8 and 16.
    const l = new ClusterRateLimiter({ Read: 1000, Write: 1000, Search: 1000 }, 100, channel);
    for (let i = 0; i < 20; i++) assert.equal((await l.consume('ws_1', 'Read'))?.allowed, true);
    assert.deepEqual(
      sent,
      [1, 2, 4, 8, 16].map((extra) => ({ n: 1, extra, give: 0 })),
    );
    await l.close();
  });

  test('a primary that does not answer leaves the decision to the worker', async () => {
    const { channel } = wired(false);
    const l = new ClusterRateLimiter({ Read: 1, Write: 1, Search: 1 }, 10, channel);
    const pending = Promise.resolve(l.consume('ws_1', 'Read'));
    await new Promise((r) => setImmediate(r));
    await l.close();
    assert.equal((await pending)?.allowed, true, 'decided by the worker alone');
  });

  test('the primary takes as the Redis script does', () => {
    const b = { tokens: 10, at: 0 };
    assert.deepEqual(takeMany(b, 10, 0, 1, 100, 0), { taken: 1, before: 10, leased: 4 }, 'half of the 9 left');
    assert.deepEqual(takeMany(b, 10, 0, 6, 100, 0), { taken: 5, before: 5, leased: 0 }, 'no lease unless all got theirs');
    assert.deepEqual(takeMany(b, 10, 0, 1, 0, 4), { taken: 1, before: 4, leased: 0 }, 'given back first');
    assert.deepEqual(takeMany(b, 10, 0, 1, 0, 100), { taken: 1, before: 10, leased: 0 }, 'never past the burst');
  });

  test('two calls out at once: their leases join, and no token serves past its own call plus 10 ms', () => {
    let now = 0;
    const leases = new Leases(10, () => now);
    const a = leases.ask('k', 1000, 1);
    now = 1;
    const b = leases.ask('k', 1000, 1);
    now = 2;
    leases.grant('k', a, 1, 900, 0);
    now = 3;
    leases.grant('k', b, 1, 899, 0);
    now = 9;
    assert.ok(leases.spend('k', 1000)?.allowed);
    assert.ok(leases.spend('k', 1000)?.allowed, 'both leases serve');
    assert.equal(leases.spend('k', 1000), undefined);
    // c's lease ends at 30 with a token left; d, sent at 25, answers at 32: its token serves to 35.
    now = 20;
    const c = leases.ask('k', 1000, 1);
    now = 25;
    const d = leases.ask('k', 1000, 1);
    now = 26;
    leases.grant('k', c, 2, 900, 0);
    assert.ok(leases.spend('k', 1000)?.allowed);
    now = 32;
    leases.grant('k', d, 1, 899, 0);
    assert.ok(leases.spend('k', 1000)?.allowed, "d's token, though c's lease ended at 30");
    now = 35;
    assert.equal(leases.spend('k', 1000), undefined, 'and not after 35');
  });
});
