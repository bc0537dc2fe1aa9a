// Run after every install (package.json `postinstall`): mends postgres.js 3.4.9 where a connection
// lost under it, to a restart of PostgreSQL or an ended backend, broke more than the statements
// it carried (docs/design.md §Database, "A lost connection"). Upstream: porsager/postgres issues
// 1066, 1154 and 1208, not fixed in a release yet.
//
// - A statement written to a connection that had closed ran `socket.write` on `null`: one of
//   1 KiB or more failed with a TypeError, and a smaller one, written at the next setImmediate,
//   threw there, where nothing can catch it, and the process died. Now such a write rejects the
//   statements waiting on the connection with CONNECTION_CLOSED, as the close itself does.
// - A close with a small write pending left its timer set and its bytes kept: the connection,
//   opened again, never wrote a small statement and would have sent the dead one's bytes first.
//   Now a close forgets the pending write.
// - A connection that closed while a transaction held it went back to the idle connections on
//   release, with no socket and nothing to open it again. Now it stays closed until needed.
// - A connection that closed while it read the server's array types (the first thing a new
//   connection does) rejected a promise nobody handled. The statement it was opened for is failed
//   by the close itself; now that promise's rejection is handled.
// - Every connect waits for a timer (the backoff after a lost connection, else a turn of the event
//   loop). An end that terminated the connection meanwhile left that timer set, and it then opened
//   a connection nobody could end, which kept the process alive. Now a terminate clears it.
//
// The script fails the install when it finds neither the code it mends nor its mends, so that an
// upgrade of postgres.js is looked at.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MARK = 'rolodex: mended';
const NEXT_WRITE = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const NEXT_WRITE_MENDED = `  function nextWrite(fn) {
    if (!socket) { // ${MARK}: closed under a pending write
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      const err = Errors.connection('CONNECTION_CLOSED', options)
      errored(err)
      while (sent.length)
        queryError(sent.shift(), err)
      query = null
      return true // not false: the pool would hold the next statements back for a drain that never comes
    }
    const x = socket.write(chunk, fn)`;
// In terminate() and closed(), the only two places that cancel the pending write.
const CANCEL = `
    clearImmediate(nextWriteTimer)
`;
const CANCEL_MENDED = `
    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null // ${MARK}: the write is cancelled, and its bytes with it
`;

const RELEASE = `
    sql.release = () => {
      c.reserved = null
      onopen(c)
    }`;
const RELEASE_MENDED = `
    sql.release = () => {
      c.reserved = null
      c.queue === closed // ${MARK}: closed while held, it stays closed and is opened when needed
        ? queries.length && connect(c, queries.shift())
        : onopen(c)
    }`;

const TYPES = `
        return fetchArrayTypes()
`;
const TYPES_MENDED = `
        return fetchArrayTypes().catch(() => {}) // ${MARK}: closed while reading types, the statement failed already
`;

const DECLARED = `
    , terminated = false
    , incomings = null
`;
const DECLARED_MENDED = `
    , terminated = false
    , reconnectTimer = null // ${MARK}: the connect a reconnect scheduled
    , incomings = null
`;
const RECONNECT = `
    setTimeout(connect, closedTime ? Math.max(0, closedTime + delay - performance.now()) : 0)
`;
const RECONNECT_MENDED = `
    reconnectTimer = setTimeout(connect, closedTime ? Math.max(0, closedTime + delay - performance.now()) : 0) // ${MARK}
`;
const TERMINATE = `
  function terminate() {
    terminated = true
`;
const TERMINATE_MENDED = `
  function terminate() {
    terminated = true
    clearTimeout(reconnectTimer) // ${MARK}: a connect scheduled before the end opens nothing after it
`;

/** [code, mended code, how many times it appears] for each file of the package that is mended. */
const MENDS = {
  'src/connection.js': [
    [NEXT_WRITE, NEXT_WRITE_MENDED, 1],
    [CANCEL, CANCEL_MENDED, 2],
    [TYPES, TYPES_MENDED, 1],
    [DECLARED, DECLARED_MENDED, 1],
    [RECONNECT, RECONNECT_MENDED, 1],
    [TERMINATE, TERMINATE_MENDED, 1],
  ],
  'src/index.js': [[RELEASE, RELEASE_MENDED, 1]],
};

/** The mended source, or null when it is not the code the mends were written for. */
export function mend(file, source) {
  let out = source;
  for (const [code, mended, times] of MENDS[file]) {
    // Each mend once: a file mended by an earlier version of this script takes the newer mends only.
    if (out.split(mended).length - 1 === times) continue;
    if (out.split(code).length - 1 !== times) return null;
    out = out.replaceAll(code, mended);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of Object.keys(MENDS)) {
    // The ES module build, which Rolodex loads, and the CommonJS one, alike.
    for (const build of [file, `cjs/${file}`]) {
      const path = fileURLToPath(new URL(`../node_modules/postgres/${build}`, import.meta.url));
      const mended = mend(file, readFileSync(path, 'utf8'));
      if (mended === null) {
        console.error(`scripts/patch-postgres.mjs: ${path} is not the postgres.js these mends were written for; check whether they are still needed`);
        process.exit(1);
      }
      writeFileSync(path, mended);
    }
  }
}
