// One API request sent through the app's own request handler (Fastify's `routing`, the function
// its HTTP server calls for every request), in memory (docs/mcp.md §Tools): the same routing,
// hooks, validation, handler, serialization and error handling as a request from the network,
// with a request and a response that live in memory. It is what app.inject does with less: no
// options to validate, and a response that keeps what the handler writes instead of an
// http.ServerResponse building a header block for a socket that is not there.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Readable, Writable } from 'node:stream';

export interface MemoryRequestInit {
  method: string;
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: string | undefined;
  /** The address the request counts as coming from (the caller's own). */
  remoteAddress: string | undefined;
  encrypted: boolean;
  /**
   * The caller's HTTP version, 1.1 if not given: an HTTP/1.0 call without Host stays one, which
   * needs no Host (docs/errors.md §Before routing).
   */
  httpVersion?: '1.0' | '1.1';
}

export interface MemoryAnswer {
  status: number;
  body: string;
}

class MemorySocket extends EventEmitter {
  readonly remoteAddress: string | undefined;
  readonly encrypted: boolean;

  constructor(remoteAddress: string | undefined, encrypted: boolean) {
    super();
    this.remoteAddress = remoteAddress;
    this.encrypted = encrypted;
  }
}

class MemoryRequest extends Readable {
  readonly httpVersion: '1.0' | '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor: 0 | 1;
  readonly aborted = false;
  readonly complete = true;
  readonly method: string;
  url: string;
  readonly headers: Record<string, string>;
  readonly socket: MemorySocket;
  #body: Buffer | undefined;

  constructor(init: MemoryRequestInit) {
    super();
    this.method = init.method;
    this.httpVersion = init.httpVersion ?? '1.1';
    this.httpVersionMinor = this.httpVersion === '1.0' ? 0 : 1;
    this.url = init.url;
    this.headers = init.headers;
    this.socket = new MemorySocket(init.remoteAddress, init.encrypted);
    if (init.body !== undefined) {
      this.#body = Buffer.from(init.body);
      this.headers['content-length'] = String(this.#body.length);
    }
  }

  override _read(): void {
    if (this.#body) this.push(this.#body);
    this.#body = undefined;
    this.push(null);
  }
}

class MemoryResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  readonly #headers: Record<string, OutgoingHttpHeader> = {};
  readonly #chunks: (string | Buffer)[] = [];

  constructor() {
    super({ decodeStrings: false });
  }

  writeHead(status: number, headers?: Record<string, OutgoingHttpHeader>): this {
    this.statusCode = status;
    if (headers) for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
    this.headersSent = true;
    return this;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    this.#headers[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.#headers[name.toLowerCase()];
  }

  getHeaders(): Record<string, OutgoingHttpHeader> {
    return { ...this.#headers };
  }

  hasHeader(name: string): boolean {
    return Object.hasOwn(this.#headers, name.toLowerCase());
  }

  removeHeader(name: string): void {
    delete this.#headers[name.toLowerCase()];
  }

  addTrailers(): void {}

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.headersSent = true;
    this.#chunks.push(chunk);
    done();
  }

  text(): string {
    const chunks = this.#chunks;
    if (chunks.every((c) => typeof c === 'string')) return chunks.join('');
    return Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8');
  }
}

/** Sends `init` through `app`'s request handler and resolves with the status and body it answered. */
export function dispatchInMemory(app: FastifyInstance, init: MemoryRequestInit): Promise<MemoryAnswer> {
  const req = new MemoryRequest(init);
  const res = new MemoryResponse();
  return new Promise((resolve, reject) => {
    res.once('finish', () => resolve({ status: res.statusCode, body: res.text() }));
    res.once('error', reject);
    res.once('close', () => {
      if (!res.writableFinished) reject(new Error('the response was closed before it was complete'));
    });
    app.routing(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  });
}
