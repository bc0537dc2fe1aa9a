// Loaded into every test process (`--import` in test/run.ts). The run waits for each test process
// to exit, and a process with a handle left open (a timer, a socket, a pool) never does: the whole
// run then hangs with nothing to say why. So once a process's tests and hooks are done, a process
// still alive a minute later names what holds it and fails.
// The timer is unref'd: it never keeps alive a process that would exit on its own.
// A process that ends with a failing status before its tests are done says first who ended it and
// with which status.
import { createHook } from 'node:async_hooks';
import { Server, Socket } from 'node:net';
import { after } from 'node:test';

// Where each TCP handle was opened, to name the code that left one open. Sockets are few; timers,
// which are many, are not followed.
const opened = new WeakMap<object, string>();
createHook({
  init(_id, type, _trigger, resource) {
    if (type !== 'TCPWRAP') return;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 30;
    opened.set(resource, new Error().stack?.split('\n').slice(2).join('\n') ?? '');
    Error.stackTraceLimit = limit;
  },
}).enable();

const GRACE_MS = 60_000;

/** Where each open socket goes: which pool, server or client held on (timers are not handles here). */
function describeHandles(): string {
  // The only way to the handles themselves; getActiveResourcesInfo names their kinds only.
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles
    .map((h) => {
      if (h instanceof Socket) {
        if (h.remotePort === undefined) return `socket (${h.localAddress ?? 'pipe'}${h.localPort ? `:${h.localPort}` : ''})`;
        const at = opened.get((h as unknown as { _handle: object })._handle);
        return `socket ${h.localPort} -> ${h.remoteAddress}:${h.remotePort}${h.listenerCount('data') > 0 ? ', read' : ''}${at ? `, opened\n${at}\n` : ''}`;
      }
      if (h instanceof Server) return `server ${JSON.stringify(h.address())}`;
      return (h as object).constructor?.name ?? typeof h;
    })
    .join('; ');
}

after(() => {
  setTimeout(() => {
    process.stderr.write(
      `exit-check: still running ${GRACE_MS / 1000} s after the last test; open handles: ${process.getActiveResourcesInfo().join(', ')} (${describeHandles()})\n`,
    );
    // Not process.exit: it waits for the thread pool, where an open of a FIFO that nothing else
    // opens never returns, and the run would hang on. The process ends at once; test/run.ts reports
    // the process failed.
    process.kill(process.pid, 'SIGKILL');
  }, GRACE_MS).unref();
});

process.on('exit', (code) => {
  if (code !== 0)
    process.stderr.write(
      `exit-check: ${process.argv.slice(1).join(' ') || 'this process'} exits with status ${code}\n${new Error('exited from').stack ?? ''}\n`,
    );
});
