// While the database cannot be reached, every request that needs it is answered 503, and the log
// says so in a few lines, not a warning with its stack for each such request
// (docs/reliability.md §Lost connections, "The log"): one line when the first request meets a lost
// or refused connection, without a stack (a driver's stack says nothing the code and message do
// not); one line a minute while requests keep meeting one, with how many did; and one line once
// the database answers again. That last line needs an answer of the database itself: while the
// outage lasts, the process sends it `select 1` once a second (a request that succeeded may not
// have needed it), outside any request's budget.
import type { FastifyBaseLogger } from 'fastify';
import { outsideBudget, ping, type Db } from '../db/index.ts';

/** How often the log says that the outage goes on. */
export const STILL_LOG_MS = 60_000;
/** How often the database is asked whether it answers again while it does not. */
export const PROBE_MS = 1_000;

/** The error's code and message: all the log keeps of it. */
function causeOf(err: unknown): { code?: string; reason: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const reason = typeof e?.message === 'string' ? e.message : String(err);
  return code === undefined ? { reason } : { code, reason };
}

export class DatabaseOutage {
  readonly #db: Db;
  readonly #logger: FastifyBaseLogger;
  /** Date.now() when the outage began; undefined while the database is reachable. */
  #since: number | undefined;
  #logged = 0;
  /** Requests that met a lost connection since the outage began. */
  #answered = 0;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(db: Db, logger: FastifyBaseLogger) {
    this.#db = db;
    this.#logger = logger;
  }

  /** Whether the database is taken for unreachable now. */
  get down(): boolean {
    return this.#since !== undefined;
  }

  /** A request met `err`, a lost or refused connection, and is answered 503. */
  lost(err: unknown, log: FastifyBaseLogger): void {
    const now = Date.now();
    this.#answered++;
    if (this.#since === undefined) {
      this.#since = this.#logged = now;
      this.#answered = 1;
      log.warn(causeOf(err), 'database not reachable; requests that need it are answered 503 until it is back');
      this.#watch();
    } else if (now - this.#logged >= STILL_LOG_MS) {
      this.#logged = now;
      log.warn({ ...causeOf(err), answered: this.#answered, ms: now - this.#since }, 'database still not reachable');
    }
  }

  #watch(): void {
    if (this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      outsideBudget(() => ping(this.#db)).then(
        () => {
          if (this.#closed) return;
          this.#logger.info({ answered: this.#answered, ms: Date.now() - (this.#since ?? 0) }, 'database reachable again');
          this.#since = undefined;
        },
        () => this.#watch(),
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
