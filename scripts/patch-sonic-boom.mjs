// Run after every install (package.json `postinstall`): mends sonic-boom 4.2.1, the stream pino
// writes the log through, where a process whose standard output has lost its reader (a closed
// pipe: a log shipper or `| tee` that ended, a terminal gone) never exited (docs/reliability.md
// §A log nobody reads). At exit pino writes what the log still holds with `flushSync`, whose loop
// retried every failed write after 100 ms whatever the error: EPIPE, which no retry mends, kept
// the process sleeping in that loop for good, and a SIGTERM's handler never ran. Now an error
// other than EAGAIN or EBUSY ends the loop and is thrown, as sonic-boom 5 does; pino's exit
// handler then lets the process end. Upstream fixed it in sonic-boom 5, which pino 10 does not
// take yet.
//
// The script fails the install when it finds neither the code it mends nor its mends, so that an
// upgrade of sonic-boom is looked at.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MARK = 'rolodex: mended';
const RETRY = `      if (shouldRetry && !this.retryEAGAIN(err, buf.length, this._len - buf.length)) {`;
const RETRY_MENDED = `      if (!shouldRetry || !this.retryEAGAIN(err, buf.length, this._len - buf.length)) { // ${MARK}: only EAGAIN and EBUSY are tried again`;
// Both loops of flushSync: the one for text and the one for buffers.
const TIMES = 2;

/** The mended source, or null when it is not the code the mend was written for. */
export function mend(source) {
  if (source.split(RETRY_MENDED).length - 1 === TIMES) return source;
  if (source.split(RETRY).length - 1 !== TIMES) return null;
  return source.replaceAll(RETRY, RETRY_MENDED);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = fileURLToPath(new URL('../node_modules/sonic-boom/index.js', import.meta.url));
  const mended = mend(readFileSync(path, 'utf8'));
  if (mended === null) {
    console.error(`scripts/patch-sonic-boom.mjs: ${path} is not the sonic-boom this mend was written for; check whether it is still needed`);
    process.exit(1);
  }
  writeFileSync(path, mended);
}
