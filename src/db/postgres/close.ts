// How the PostgreSQL clients of a process end (docs/deploy.md §Start and stop): within a bound
// that fits the stop limit beside the requests' deadline, whether the server answers or not.
import type net from 'node:net';
import type { Client } from './lanes.ts';

/**
 * How long an ending client waits for its connections to end gently (the statements they carry
 * answered, then a Terminate sent and the socket closed), in seconds as postgres.js counts; then
 * postgres.js tears them down and fails what they still carry. A PostgreSQL that answers ends
 * them within milliseconds; one that is silent never would.
 */
export const CLOSE_TIMEOUT_S = 1;

/** Ends `client` within CLOSE_TIMEOUT_S; never fails. */
export function endClient(client: Client): Promise<void> {
  return client.end({ timeout: CLOSE_TIMEOUT_S }).catch(() => {});
}

/**
 * The sockets of a process's connections. A client torn down leaves some open: one still
 * connecting (postgres.js ends only a connected socket), and one it ended whose peer never closes
 * its side (a silent server). `destroy` closes them, so that nothing of the database outlives the
 * handle's close. Those closed already are dropped as new ones come (not on their `close` event,
 * whose listeners postgres.js removes when it wraps a socket in TLS).
 */
export class OpenSockets {
  #open: net.Socket[] = [];

  add(socket: net.Socket): net.Socket {
    this.#open = this.#open.filter((s) => !s.destroyed);
    this.#open.push(socket);
    return socket;
  }

  destroy(): void {
    for (const socket of this.#open) socket.destroy();
    this.#open = [];
  }
}
