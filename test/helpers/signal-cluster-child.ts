// A cluster for test/db/signals-cluster.test.ts: a primary relaying commit signals as `rolodex
// serve` does (src/cluster.ts), a worker listening on one SQLite file, and, once it listens, a
// second worker committing a transaction that signals. The primary prints `heard` when the
// listener heard it, `not heard` 5 s after the commit (however long the workers took to start, on a
// loaded machine), `not started` if the commit never came, and exits.
//   node test/helpers/signal-cluster-child.ts SQLITE_FILE
import cluster from 'node:cluster';
import { dirname } from 'node:path';
import { openDb } from '../../src/db/database.ts';
import { onSignal, relayClusterSignals, signalAfterCommit, write } from '../../src/db/index.ts';

const file = process.argv[2]!;

if (cluster.isPrimary) {
  relayClusterSignals(cluster);
  const done = (what: string) => {
    console.log(what);
    for (const w of Object.values(cluster.workers ?? {})) w?.kill();
    process.exit(0);
  };
  setTimeout(() => done('not started'), 50_000);
  const listener = cluster.fork({ ROLE: 'listen' });
  listener.on('message', (m: { t?: string }) => {
    if (m?.t === 'listening')
      cluster.fork({ ROLE: 'write' }).on('message', (w: { t?: string }) => w?.t === 'committed' && setTimeout(() => done('not heard'), 5000));
    if (m?.t === 'heard') done('heard');
  });
} else {
  const db = openDb({ dataDir: dirname(file), sqliteFile: file });
  if (process.env.ROLE === 'listen') {
    onSignal(db, 'test', () => process.send?.({ t: 'heard' }));
    process.send?.({ t: 'listening' });
  } else {
    await write(
      db.kysely,
      async (tx) => {
        await tx.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
        signalAfterCommit(tx, 'test');
      },
      { followUpFailed: () => {} },
    );
    process.send?.({ t: 'committed' });
  }
}
