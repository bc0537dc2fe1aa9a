// A local webhook endpoint for tests: records every POST (headers and raw body), answers with
// `status` (after `delayMs`, when set), or holds requests unanswered while `hold` is set.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface Received {
  headers: Record<string, string>;
  body: string;
}

export interface TestReceiver {
  url: string;
  received: Received[];
  /** Requests held unanswered (hold mode). */
  held: Received[];
  status: number;
  /** When set, the status of each request by its body (instead of `status`). */
  statusFor: ((body: string) => number) | null;
  hold: boolean;
  /** How long each answer waits after the request's body arrived. */
  delayMs: number;
  onHold: (() => void) | null;
  ids(): string[];
  stop(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  const held: ServerResponse[] = [];
  const r: TestReceiver = {
    url: '',
    received: [],
    held: [],
    status: 204,
    statusFor: null,
    hold: false,
    delayMs: 0,
    onHold: null,
    ids: () => r.received.map((x) => x.headers['webhook-id']!),
    stop: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (r.hold) {
        held.push(res);
        r.held.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        r.onHold?.();
        return;
      }
      const body = Buffer.concat(chunks).toString();
      r.received.push({ headers: req.headers as Record<string, string>, body });
      res.statusCode = r.statusFor ? r.statusFor(body) : r.status;
      if (r.delayMs > 0) setTimeout(() => res.end(), r.delayMs);
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  return r;
}
