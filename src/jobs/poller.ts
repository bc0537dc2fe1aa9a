// The loop every background job of a server runs (the mail and webhook dispatchers, the
// enrichment runner): a round claims and works what is due and says how many it claimed; an
// empty round sleeps `pollMs`, a full one goes again at once; a failed round is logged and the
// next one retries. A round is background work (src/db/background.ts). `wake` ends a sleep early (or makes the next one end at once); `stop` lets
// the round under way finish, and a round sees `stopping` to leave its unstarted work alone.
import type { Logger } from 'pino';
import { inBackground } from '../db/index.ts';

export interface Poller {
  readonly stopping: boolean;
  wake(): void;
  stop(): Promise<void>;
}

export function startPoller(round: () => Promise<number>, opts: { pollMs: number; logger: Logger; what: string }): Poller {
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

  const loop = (async () => {
    // The first round starts after the caller has its Poller, which the round may read.
    await Promise.resolve();
    while (!stopping) {
      let claimed = 0;
      try {
        // No request waits for a round: on SQLite its writes let the requests' go first (src/db/background.ts).
        claimed = await inBackground(round);
      } catch (err) {
        opts.logger.warn({ err }, `${opts.what} round failed; the next one retries`);
      }
      if (claimed === 0 && !stopping) await sleep(opts.pollMs);
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
