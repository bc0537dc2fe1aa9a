// A process that logs through the server's logger (src/logger.ts) after its standard output lost
// its reader, then exits as the server does when it stops: test/ops/log-reader-gone.test.ts.
import { createLogger } from '../../src/logger.ts';

const logger = createLogger('info');
process.stdin.once('data', () => {
  // The first line is being written when the second comes; the exit writes the second.
  logger.info('shutting down');
  logger.info('stopped');
  process.exit(0);
});
