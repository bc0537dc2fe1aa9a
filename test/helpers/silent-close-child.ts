// A process for test/db/pg-close.test.ts: a PostgreSQL handle through a proxy that, once told,
// passes nothing on, so that a read misses its deadline and its lane is replaced; then the handle
// is closed, and the process must exit by itself.
//   node test/helpers/silent-close-child.ts DATABASE_URL
import { connect, createServer, type Socket } from 'node:net';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';

const target = new URL(process.argv[2]!);
let silent = false;
const sockets = new Set<Socket>();
const proxy = createServer((client) => {
  const upstream = connect(Number(target.port || 5432), target.hostname);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  }
  client.on('data', (d) => silent || upstream.write(d));
  upstream.on('data', (d) => silent || client.write(d));
});
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
const url = new URL(target);
url.hostname = '127.0.0.1';
url.port = String((proxy.address() as { port: number }).port);
const db = openDb({ dataDir: '/nonexistent', databaseUrl: url.toString(), statementTimeoutMs: 200 });
// The first read, through the proxy while it still passes everything on, opens the connection;
// on a loaded machine it may itself run past the 200 ms timeout, so it is tried again until it
// is answered (the read this process is about is the next one).
for (let attempt = 1; ; attempt++) {
  try {
    await sql`select 1`.execute(db.kysely);
    break;
  } catch (err) {
    if (attempt >= 20) throw err;
  }
}
silent = true;
const outcome = await sql`select 1`.execute(db.kysely).then(
  () => 'answered',
  (err: Error) => err.name,
);
process.stdout.write(`${outcome}\n`);
await db.close();
proxy.close();
// The proxy's own sockets go with it; what is left open is the handle's.
for (const s of sockets) s.destroy();
