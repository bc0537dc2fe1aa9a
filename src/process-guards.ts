// What the process does with an error nobody handled (docs/reliability.md §Unhandled errors).
// A promise rejection nobody handles is logged and the process keeps serving: each such promise
// belongs to one piece of work (a request, a statement), and every request already has its own
// deadline and answer, so ending the process would drop every other request in flight for it. A
// synchronous exception nobody caught leaves the process in a state nobody can vouch for: it is
// logged and the process exits with status 1, for its supervisor (systemd, the orchestrator, the
// cluster primary) to start a fresh one.
import type { Logger } from 'pino';

let installed = false;

export function installProcessGuards(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection; serving on');
  });
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting for the supervisor to restart');
    process.exit(1);
  });
}
