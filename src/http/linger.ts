// What a request's unread body becomes once the server has answered it early (a 413 while the
// client is still sending, a 415 refused from its Content-Type alone).
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 5_000;

/**
 * After an early answer, closing the socket at once would reset the connection and could destroy
 * the answer before the client reads it. Instead the rest of the body is read and dropped, for at
 * most 4 MB or 5 seconds: clients that stop sending when the answer arrives (curl, browsers) and
 * those that send the whole body before they read (Python's http.client) get it intact; a larger
 * or slower remainder is cut off.
 */
export function linger(raw: Readable, socket: Socket): void {
  let dropped = 0;
  // A request injected in-process (app.inject) has a stand-in socket without destroy(); ending its
  // stream is the equivalent there.
  const cut = () => (typeof socket.destroy === 'function' ? socket.destroy() : raw.destroy());
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}
