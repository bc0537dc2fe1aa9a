// The background jobs' loop while its rounds keep failing, as while the database is down
// (docs/reliability.md §Background jobs): it backs off from pollMs, logs the first failure and
// not every round, says when rounds succeed again, and goes back to polling at pollMs.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPoller } from '../../src/jobs/poller.ts';
import { createLogger } from '../../src/logger.ts';

test('rounds failing for a second: a few rounds and one warning, then a line when they succeed', async () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as { level: number; msg: string });
        cb();
      },
    }),
  );
  let down = true;
  let failedRounds = 0;
  let rounds = 0;
  const poller = startPoller(
    async () => {
      rounds++;
      if (down) {
        failedRounds++;
        throw Object.assign(new Error('the database refused a connection just now'), { code: 'DATABASE_REFUSED' });
      }
      return 0;
    },
    { pollMs: 10, logger, what: 'webhook' },
  );
  try {
    await sleep(1_500);
    // At pollMs it made a round every 10 ms (about 150, each a warning with its stack); doubling
    // waits of 10, 20, … 640 ms make 8 in 1.5 s, 9 on a slow timer.
    assert.ok(failedRounds >= 3 && failedRounds <= 10, `${failedRounds} failed rounds`);
    const warnings = lines.filter((l) => l.level === 40);
    assert.deepEqual(
      warnings.map((l) => l.msg),
      ['webhook round failed; the next one retries'],
    );
    down = false;
    // The wait under way (at most 1.28 s here) ends, then rounds go on at pollMs.
    await sleep(2_000);
    const back = lines.filter((l) => l.msg === 'webhook rounds succeed again');
    assert.equal(back.length, 1, JSON.stringify(lines));
    const before = rounds;
    await sleep(300);
    assert.ok(rounds - before >= 5, `${rounds - before} rounds in 300 ms once it succeeds again`);
  } finally {
    await poller.stop();
  }
});
