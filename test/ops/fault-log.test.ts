// What the log says of an operational fault (docs/reliability.md §Operational faults in the log):
// one line when the first request meets it, none for the requests after it, one a minute while
// they go on, and never a stack. test/ops/pg-refused.test.ts plays a whole outage of the database
// through the app, its end included; this holds the minute's line, with a clock of the test's
// own. The database is PostgreSQL at a port where nothing listens, so that the process's own
// probe keeps failing. A fault nothing can be asked about is over after a minute without it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { mock, test } from 'node:test';
import { openDb } from '../../src/db/database.ts';
import { databaseOutage, RepeatedFault, STILL_LOG_MS } from '../../src/http/fault-log.ts';
import { causeOf } from '../../src/lib/errors.ts';
import { createLogger } from '../../src/logger.ts';

function capture() {
  const text: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _enc, cb) {
        text.push(String(chunk));
        cb();
      },
    }),
  );
  const lines = () =>
    text
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string; code?: string; answered?: number; ms?: number });
  return { logger, text, lines };
}

test("an error as a log keeps it: its code (own, else with `named` its name, else its cause's) and message, never its stack", () => {
  const own = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const wrapped = new Error('the pool gave up', { cause: { code: '57P01' } });
  // The S3 client's errors carry their code as their name.
  const s3 = Object.assign(new Error('The specified bucket does not exist'), { name: 'NoSuchBucket' });
  // What the request log keeps (src/http/fault-log.ts, error-handler.ts, idempotency.ts).
  assert.deepEqual(causeOf(own), { code: 'ECONNREFUSED', reason: own.message });
  assert.deepEqual(causeOf(wrapped), { code: '57P01', reason: 'the pool gave up' });
  assert.deepEqual(causeOf(s3), { reason: s3.message });
  assert.deepEqual(causeOf('refused'), { reason: 'refused' });
  // What the sweeper keeps (src/jobs/sweeper.ts): a name stands for a missing code.
  assert.deepEqual(causeOf(own, { named: true }), { code: 'ECONNREFUSED', reason: own.message });
  assert.deepEqual(causeOf(s3, { named: true }), { code: 'NoSuchBucket', reason: s3.message });
  assert.deepEqual(causeOf(wrapped, { named: true }), { code: 'Error', reason: 'the pool gave up' });
  // Whatever was thrown, even nothing, gives a line rather than an error of its own.
  for (const named of [false, true]) {
    assert.deepEqual(causeOf(null, { named }), { reason: 'null' });
    assert.deepEqual(causeOf(undefined, { named }), { reason: 'undefined' });
  }
});

test('a fault met for two minutes, then after a quiet minute: a line a minute, then a first line again', () => {
  const { logger, text, lines } = capture();
  const fault = new RepeatedFault({ first: 'first', still: 'still' }, logger);
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  try {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    for (let second = 0; second <= 120; second++) {
      for (let i = 0; i < 10; i++) fault.met(timeout, logger);
      mock.timers.tick(1000);
    }
    assert.equal(fault.down, true);
    mock.timers.tick(STILL_LOG_MS);
    assert.equal(fault.down, false);
    fault.met(timeout, logger);
    assert.deepEqual(
      lines().map((l) => [l.level, l.msg, l.code, l.answered, l.ms]),
      [
        [40, 'first', '57014', undefined, undefined],
        [40, 'still', '57014', 601, STILL_LOG_MS],
        [40, 'still', '57014', 1201, 2 * STILL_LOG_MS],
        [40, 'first', '57014', undefined, undefined],
      ],
    );
    assert.ok(!text.join('').includes('"stack"'));
  } finally {
    mock.timers.reset();
    fault.close();
  }
});

test('requests meeting a lost connection for two minutes: three lines, no stack', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-outage-'));
  const db = openDb({ dataDir: dir, databaseUrl: 'postgres://postgres@127.0.0.1:1/none', statementTimeoutMs: 1000 });
  const text: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _enc, cb) {
        text.push(String(chunk));
        cb();
      },
    }),
  );
  const outage = databaseOutage(db, logger);
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  try {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    for (let minute = 0; minute < 3; minute++) {
      for (let i = 0; i < 100; i++) outage.met(refused, logger);
      mock.timers.tick(STILL_LOG_MS / 2);
      for (let i = 0; i < 100; i++) outage.met(refused, logger);
      mock.timers.tick(STILL_LOG_MS / 2);
    }
    const lines = text
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string; code?: string; answered?: number; ms?: number });
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.code, l.answered, l.ms]),
      [
        [40, 'database not reachable; requests that need it are answered 503 until it is back', 'ECONNREFUSED', undefined, undefined],
        [40, 'database still not reachable', 'ECONNREFUSED', 201, STILL_LOG_MS],
        [40, 'database still not reachable', 'ECONNREFUSED', 401, 2 * STILL_LOG_MS],
      ],
    );
    assert.ok(!text.join('').includes('"stack"'));
    assert.equal(outage.down, true);
  } finally {
    mock.timers.reset();
    outage.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a fault only an operator mends: at error, each new cause told at once, the same cause once a minute', () => {
  const { logger, text, lines } = capture();
  const fault = new RepeatedFault({ first: 'first', still: 'still', level: 'error', eachCause: true }, logger);
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  try {
    const bucket = { message: 'the bucket "b" does not exist (S3_BUCKET)' };
    const key = { message: "the store refused the server's credentials (S3_ACCESS_KEY_ID)" };
    // One refusal met on many files is one cause: its code.
    const file = (n: number) => ({ code: 'EACCES', message: `/data/blobs: this process may not use it (EACCES on /data/blobs/${n})` });
    for (let i = 0; i < 5; i++) fault.met(bucket, logger);
    mock.timers.tick(1000);
    for (let i = 0; i < 5; i++) fault.met(key, logger);
    mock.timers.tick(STILL_LOG_MS / 2);
    fault.met(key, logger);
    mock.timers.tick(STILL_LOG_MS / 2);
    fault.met(key, logger);
    for (let i = 0; i < 5; i++) fault.met(file(i), logger);
    assert.deepEqual(
      lines().map((l) => [l.level, l.msg, (l as { reason?: string }).reason, l.answered]),
      [
        [50, 'first', bucket.message, undefined],
        [50, 'first', key.message, undefined],
        [50, 'still', key.message, 7],
        [50, 'first', file(0).message, undefined],
      ],
    );
    assert.ok(!text.join('').includes('"stack"'));
  } finally {
    mock.timers.reset();
    fault.close();
  }
});
