// The sockets of postgres.js's connections, made here (its `socket` option) so that what a
// connection sends in one turn of the event loop goes out in one write (docs/performance.md
// §Writes of one turn). postgres.js writes a statement to its socket as soon as its buffer holds
// 1 KiB: a group commit (src/db/postgres/group-commit.ts) of list creates, each about 1 KiB of
// statements, made one write, one wake-up of the backend, per create. Here the socket is corked at
// its first write of a turn and uncorked once the turn's microtasks have run (process.nextTick
// from within them runs after them all), so those writes leave together; a turn's writes past the
// socket's high-water mark go out at once, as they did, so postgres.js sees the same backpressure.
//
// Otherwise the socket is what postgres.js makes: connected to the Unix socket `path` or to the
// next of `host`/`port` in turn, with `host` and `port` set on it for its error messages.
// postgres.js then writes its startup message at once, which the socket sends once connected,
// and its connect timeout runs as for a socket of its own. A peer that answers as no PostgreSQL
// server does fails the connection at once (src/db/postgres/peer.ts).
import net from 'node:net';
import type { OpenSockets } from './close.ts';
import { refuseStrangers } from './peer.ts';

/** What postgres.js passes to its `socket` option: its parsed connection options. */
interface Target {
  host: string[];
  port: number[];
  path?: string | false;
}

type Write = (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;

/** `socket`, its writes of one turn sent together. */
function corkedByTurn(socket: net.Socket): net.Socket {
  // net.Socket's own write, looked up at each call (a test may watch it there).
  const write: Write = (...args) => (net.Socket.prototype.write as Write).apply(socket, args);
  let corked = false;
  const flush = () => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  const turnWrite: Write = (chunk, ...rest) => {
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (corked && socket.writableLength + size >= socket.writableHighWaterMark) flush();
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(flush);
    }
    return write(chunk, ...rest);
  };
  // An own property, set once connect() has run: connect() sets `write` back to net.Socket's own.
  socket.write = turnWrite;
  return socket;
}

/** postgres.js's `socket` option for one client: each call connects a new socket, kept in `open`. */
export function turnSockets(open: OpenSockets): (target: Target) => net.Socket {
  let next = 0;
  return (target) => {
    const socket = open.add(new net.Socket());
    if (target.path) return refuseStrangers(corkedByTurn(socket.connect(target.path)));
    const i = next++ % target.host.length;
    const host = target.host[i]!;
    const port = target.port[i] ?? target.port[0]!;
    return refuseStrangers(corkedByTurn(Object.assign(socket.connect(port, host), { host, port })));
  };
}
