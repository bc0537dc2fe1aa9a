// An operational fault (a dependency that cannot be reached or does not answer in time, writes
// that conflict with others) is no bug, and the log says so in a few lines, not a line with its
// stack for each request it fails (docs/reliability.md §Operational faults in the log): one line
// when the first request meets it, with the error's code and message and no stack (a driver's
// stack says nothing the code and message do not); one line a minute while requests keep meeting
// it, with how many did; and, for a dependency the process can ask, one line once it answers
// again. That last line needs an answer of the dependency itself: while the fault lasts, the
// process asks it once a second (a request that succeeded may not have needed it). A fault with no
// such question is over once a minute passes without a request meeting it.
import type { FastifyBaseLogger } from 'fastify';
import { outsideBudget, ping, type Db } from '../db/index.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { causeOf } from '../lib/errors.ts';

/** How often the log says that a fault goes on. */
export const STILL_LOG_MS = 60_000;
/** How often a dependency is asked whether it answers again while it does not. */
export const PROBE_MS = 1_000;

export interface FaultLines {
  /** The first line of a fault. */
  first: string;
  /** The line a minute while requests keep meeting it. */
  still: string;
  /** A dependency's question, asked once a second while the fault lasts, and the line once answered. */
  probe?: { ask: () => Promise<unknown>; back: string };
  /** `error` for a fault only an operator mends (a setting, a disk); else `warn`. */
  level?: 'warn' | 'error';
  /**
   * Whether another cause than the one last logged is news, logged as a first line: a fault whose
   * cause names what to mend (a bucket, then credentials) tells each. A cause is its error's code,
   * else its reason: one refusal met on many files is one cause.
   */
  eachCause?: boolean;
}

export class RepeatedFault {
  readonly #lines: FaultLines;
  readonly #logger: FastifyBaseLogger;
  /** Date.now() when the fault began; undefined while there is none. */
  #since: number | undefined;
  /** Date.now() of the fault's last line, and of the last request that met it. */
  #logged = 0;
  #last = 0;
  /** Requests that met the fault since it began. */
  #answered = 0;
  /** The cause of the last line: its code, else its reason. */
  #cause: string | undefined;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(lines: FaultLines, logger: FastifyBaseLogger) {
    this.#lines = lines;
    this.#logger = logger;
  }

  /** Whether the fault lasts now. */
  get down(): boolean {
    if (this.#since === undefined) return false;
    return this.#lines.probe !== undefined || Date.now() - this.#last < STILL_LOG_MS;
  }

  /** A request met `err`, this fault, and is answered 503. */
  met(err: unknown, log: FastifyBaseLogger): void {
    const now = Date.now();
    const cause = causeOf(err);
    const level = this.#lines.level ?? 'warn';
    const named = cause.code ?? cause.reason;
    const news = this.#lines.eachCause === true && named !== this.#cause;
    const over = !this.down;
    this.#answered++;
    this.#last = now;
    if (over || news) {
      this.#since = this.#logged = now;
      this.#answered = 1;
      this.#cause = named;
      log[level](cause, this.#lines.first);
      if (over && this.#lines.probe) this.#watch(this.#lines.probe);
    } else if (now - this.#logged >= STILL_LOG_MS) {
      this.#logged = now;
      this.#cause = named;
      log[level]({ ...cause, answered: this.#answered, ms: now - this.#since! }, this.#lines.still);
    }
  }

  #watch(probe: { ask: () => Promise<unknown>; back: string }): void {
    if (this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      probe.ask().then(
        () => {
          if (this.#closed) return;
          this.#logger.info({ answered: this.#answered, ms: Date.now() - (this.#since ?? 0) }, probe.back);
          this.#since = undefined;
        },
        () => this.#watch(probe),
      );
    }, PROBE_MS);
    // A process that has nothing else to do does not stay alive for the probe.
    this.#probe.unref();
  }

  /** Stops the probe (the app closes). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
  }
}

/** A lost or refused connection to the database (docs/reliability.md §Lost connections). */
export function databaseOutage(db: Db, logger: FastifyBaseLogger): RepeatedFault {
  return new RepeatedFault(
    {
      first: 'database not reachable; requests that need it are answered 503 until it is back',
      still: 'database still not reachable',
      probe: { ask: () => outsideBudget(() => ping(db)), back: 'database reachable again' },
    },
    logger,
  );
}

/** The operational faults of an app, each logged as one (docs/reliability.md §Operational faults in the log). */
export interface Faults {
  database: RepeatedFault;
  /** The blob store could not be reached, did not answer in time, or answered a 5xx. */
  blobStore: RepeatedFault;
  /** The process stopped waiting for the database's answer past a request's time budget. */
  databaseDeadline: RepeatedFault;
  /** The database cancelled a statement at its statement timeout. */
  statementTimeout: RepeatedFault;
  /** A write conflicted with other transactions each time it ran (src/db/write.ts `rerun`). */
  writeConflict: RepeatedFault;
  /** /readyz failed otherwise: a check did not answer in time, or the blob store refuses the settings. */
  readiness: RepeatedFault;
  /** The blob store refuses this deployment's settings (a bucket, credentials, a region). */
  blobSettings: RepeatedFault;
  /** The machine refuses the local blob directory (its mode, a full or failing disk). */
  blobDisk: RepeatedFault;
  /** The database's storage refuses writes (a full disk, a read-only file or standby). */
  databaseStorage: RepeatedFault;
}

/** A fault only an operator mends: at error, each cause told, over after a minute without it. */
function toMend(first: string, still: string, logger: FastifyBaseLogger): RepeatedFault {
  return new RepeatedFault({ first, still, level: 'error', eachCause: true }, logger);
}

export function appFaults(deps: { db: Db; blobs: BlobStore }, logger: FastifyBaseLogger): Faults {
  return {
    database: databaseOutage(deps.db, logger),
    blobStore: new RepeatedFault(
      {
        first: 'blob store not reachable; requests that need it are answered 503 until it is back',
        still: 'blob store still not reachable',
        probe: { ask: () => deps.blobs.ping(), back: 'blob store reachable again' },
      },
      logger,
    ),
    databaseDeadline: new RepeatedFault(
      {
        first: 'the database did not answer in time; requests that waited for it past their time budget are answered 503',
        still: 'requests still wait for the database past their time budget',
      },
      logger,
    ),
    statementTimeout: new RepeatedFault(
      {
        first: 'database statement timed out; requests whose statements run past DATABASE_STATEMENT_TIMEOUT_MS are answered 503',
        still: 'database statements still time out',
      },
      logger,
    ),
    writeConflict: new RepeatedFault(
      {
        first: 'a write conflicted with other transactions every time it ran; such writes are answered 503',
        still: 'writes still conflict with other transactions every time they run',
      },
      logger,
    ),
    readiness: new RepeatedFault({ first: 'not ready; /readyz is answered 503 until it is', still: 'still not ready' }, logger),
    blobSettings: toMend(
      "the blob store refuses this deployment's settings; requests that need it are answered 503 until they are mended",
      "the blob store still refuses this deployment's settings",
      logger,
    ),
    blobDisk: toMend(
      'the blob directory cannot be used; requests that need it are answered 503 until it is mended',
      'the blob directory still cannot be used',
      logger,
    ),
    databaseStorage: toMend('the database cannot store writes; writes are answered 503 until it is mended', 'the database still cannot store writes', logger),
  };
}

export function closeFaults(faults: Faults): void {
  for (const fault of Object.values(faults) as RepeatedFault[]) fault.close();
}
