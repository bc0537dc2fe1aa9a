// The loop every background job of a server runs (the mail and webhook dispatchers, the
// enrichment runner): a round claims and works what is due and says how many it claimed; an
// empty round sleeps `pollMs`, a full one goes again at once; after a failed round the next one
// retries, later while they keep failing (see "Failing rounds" below). A round is background work
// (src/db/background.ts). With `defer`, a round waits while the process is busy, for at most
// `maxMs` (docs/enrichment.md §Under load). `wake` ends a sleep early (or makes the next one end
// at once); `stop` lets the round under way finish, and a round sees `stopping` to leave its
// unstarted work alone.
import type { Logger } from 'pino';
import { inBackground } from '../db/index.ts';

export interface Poller {
  readonly stopping: boolean;
  wake(): void;
  stop(): Promise<void>;
}

/** Rounds that step aside for the requests: while `busy()`, a round waits, looking again every `checkMs`, for at most `maxMs`. */
export interface Defer {
  busy: () => boolean;
  maxMs: number;
  checkMs: number;
}

/*
 * Failing rounds: while the database is down every round fails. Each failure doubles the wait
 * before the next round, from `pollMs` up to FAILING_MAX_MS (never under `pollMs`; a wake still
 * ends it), and the log says the first failure, then one line a minute while they go on, then
 * when a round succeeds again: an outage costs an operator a few lines, not a warning with its
 * stack every poll of every job (docs/reliability.md §Background jobs).
 */
const FAILING_MAX_MS = 5_000;
const FAILING_LOG_MS = 60_000;

export function startPoller(round: () => Promise<number>, opts: { pollMs: number; logger: Logger; what: string; defer?: Defer }): Poller {
  let stopping = false;
  let wake: (() => void) | null = null;
  let woken = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false;
        return resolve();
      }
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  // A wake during the wait does not end it: the round is due already, and waits for the load.
  const yieldToLoad = async ({ busy, maxMs, checkMs }: Defer) => {
    const until = Date.now() + maxMs;
    while (!stopping && busy() && Date.now() < until) await sleep(Math.min(checkMs, until - Date.now()));
  };

  const failing = { count: 0, since: 0, logged: 0 };
  const failed = (err: unknown) => {
    const now = Date.now();
    if (failing.count++ === 0) {
      failing.since = failing.logged = now;
      opts.logger.warn({ err }, `${opts.what} round failed; the next one retries`);
    } else if (now - failing.logged >= FAILING_LOG_MS) {
      failing.logged = now;
      opts.logger.warn({ err, failures: failing.count, ms: now - failing.since }, `${opts.what} rounds still fail; they go on retrying`);
    }
  };

  const loop = (async () => {
    // The first round starts after the caller has its Poller, which the round may read.
    await Promise.resolve();
    while (!stopping) {
      if (opts.defer) await yieldToLoad(opts.defer);
      if (stopping) break;
      let claimed = 0;
      try {
        // No request waits for a round: on SQLite its writes let the requests' go first (src/db/background.ts).
        claimed = await inBackground(round);
        if (failing.count > 1) opts.logger.info({ failures: failing.count, ms: Date.now() - failing.since }, `${opts.what} rounds succeed again`);
        failing.count = 0;
      } catch (err) {
        failed(err);
      }
      if (stopping) break;
      if (failing.count > 0) await sleep(Math.max(opts.pollMs, Math.min(FAILING_MAX_MS, opts.pollMs * 2 ** (failing.count - 1))));
      else if (claimed === 0) await sleep(opts.pollMs);
    }
  })();

  return {
    get stopping() {
      return stopping;
    },
    wake() {
      if (wake) wake();
      else woken = true;
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
