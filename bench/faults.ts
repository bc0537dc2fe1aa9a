// `node bench/faults.ts`: the fault runs of docs/reliability.md §Faults, on PostgreSQL. Mixed
// requests over HTTP from FAULT_CONNECTIONS (default 20) loops for FAULT_SECONDS (default 20)
// while the app's backends are terminated every FAULT_EVERY_MS (default 2000); then a quiet
// second to show recovery. Prints the figures of each phase and any unhandled rejection.
import { figures, drive, faultApp, terminator } from '../test/helpers/faults.ts';
import { seedWorkspace, call } from '../test/helpers/app.ts';

const SECONDS = Number(process.env.FAULT_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.FAULT_CONNECTIONS ?? 20);
const EVERY = Number(process.env.FAULT_EVERY_MS ?? 2000);
let unhandled = 0;
process.on('unhandledRejection', (err) => {
  unhandled++;
  console.error('unhandled rejection:', err);
});

const f = await faultApp();
try {
  const s = await seedWorkspace(f.t);
  const list = await call(f.t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Kept', $objectType: 'account' } });
  const id = list.json().id as string;
  const killer = terminator(f.appName, EVERY);
  const during = await drive(f.base, s.secret, id, { seconds: SECONDS, connections: CONNECTIONS, timeoutMs: 15_000 });
  const terminated = await killer.stop();
  const recoveryStart = performance.now();
  const after = await drive(f.base, s.secret, id, { seconds: 2, connections: 4, timeoutMs: 15_000 });
  const firstOk = after.findIndex((a) => a.status < 400);
  console.log(
    JSON.stringify(
      {
        terminated,
        during: figures(during),
        after: figures(after),
        firstOkIndex: firstOk,
        recoveryWindowMs: Math.round(performance.now() - recoveryStart),
        unhandled,
        hung: [...during, ...after].filter((a) => a.status === 0).map((a) => a.route),
      },
      null,
      1,
    ),
  );
} finally {
  await f.close();
}
