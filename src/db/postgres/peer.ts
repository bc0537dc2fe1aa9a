// A connection whose peer answers, but not as PostgreSQL (DATABASE_URL naming the port of an HTTP
// server, of the API itself, of a server that closes every connection at once), fails with an
// error saying so (docs/deploy.md §Start and stop). postgres.js opens a connection again each time
// its peer closes it before it is ready, at once and with its connect timeout started over: such
// a peer kept every command, and the server's start, opening connections for ever.
//
// The first thing a client sends is a startup message or an SSL request, and a PostgreSQL server
// (or a pooler speaking its protocol) answers each with a message of a known first byte, and
// closes a connection only after an error message. A first answer of another byte, or a close
// before any answer, is no PostgreSQL: the socket is destroyed with that error, which postgres.js
// gives the statements waiting for the connection. What else a client opens (a cancel request,
// which the server answers by closing; a direct TLS handshake) is left alone.
import type net from 'node:net';

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

const STARTUP_MESSAGE = 196608; // protocol 3.0
const SSL_REQUEST = 80877103;

// R: an authentication request; E: an error; v: the protocol version the server offers instead.
const TO_STARTUP = [0x52, 0x45, 0x76];
// S or N: whether the server speaks TLS; E: an error, from a server older than the request.
const TO_SSL_REQUEST = [0x53, 0x4e, 0x45];

/** The first bytes a PostgreSQL server may answer the first message written, if it is one of the two. */
function answersTo(chunk: unknown): readonly number[] | undefined {
  if (!(chunk instanceof Uint8Array) || chunk.byteLength < 8) return undefined;
  const code = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).readInt32BE(4);
  return code === STARTUP_MESSAGE ? TO_STARTUP : code === SSL_REQUEST ? TO_SSL_REQUEST : undefined;
}

/** The answer's first line as an operator reads it: printable characters, at most 60. */
function firstLine(chunk: Buffer): string {
  const line = chunk
    .subarray(0, 200)
    .toString('latin1')
    .split(/[\r\n]/)[0]!
    .replace(/[^\x20-\x7e]/g, '?');
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

function notPostgres(what: string): Error {
  return Object.assign(new Error(`the server there is no PostgreSQL: ${what}`), { code: 'NOT_POSTGRES' });
}

/** `socket`, destroyed with NOT_POSTGRES when its peer answers the first message as no PostgreSQL server does. */
export function refuseStrangers(socket: net.Socket): net.Socket {
  const write = socket.write.bind(socket) as Write;
  let expected: readonly number[] | undefined;
  let answered = false;
  // Only the first write is looked at; the socket's own write serves every later one.
  const first: Write = (chunk, ...rest) => {
    socket.write = write;
    expected = answersTo(chunk);
    return write(chunk, ...rest);
  };
  socket.write = first;
  socket.prependOnceListener('data', (chunk: Buffer) => {
    answered = true;
    if (expected && !expected.includes(chunk[0]!)) socket.destroy(notPostgres(`it answered "${firstLine(chunk)}"`));
  });
  socket.once('end', () => {
    if (expected && !answered) socket.destroy(notPostgres('it closed the connection without answering'));
  });
  return socket;
}
