// KEEP_ALIVE_TIMEOUT_MS (docs/deploy.md §Client connections): a kept-alive connection with no
// request in flight stays open that long, serving the requests sent on it meanwhile, and is then
// closed by the server, so that a proxy in front can be given a shorter idle timeout than it.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';

const KEEP_ALIVE_MS = 1500;

for (const dialect of testDialects()) {
  describe(`KEEP_ALIVE_TIMEOUT_MS=${KEEP_ALIVE_MS} [${dialect}]`, () => {
    let t: TestApp;
    let port = 0;
    before(async () => {
      t = await buildTestApp(dialect, { env: { KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS) } });
      port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
    });
    after(() => t.close());

    test('an idle connection is served within the timeout and closed after it', async () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      let text = '';
      socket.on('data', (d) => (text += String(d)));
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
      await new Promise((resolve) => socket.once('connect', resolve));
      const answers = () => text.split('HTTP/1.1 200').length - 1;
      const ask = async () => {
        const before = answers();
        socket.write('GET /healthz HTTP/1.1\r\nHost: rolodex.test\r\n\r\n');
        for (const deadline = Date.now() + 5000; answers() === before && Date.now() < deadline;) await wait(10);
        assert.equal(answers(), before + 1, `answered on the kept-alive connection: ${text}`);
        return Date.now();
      };
      await ask();
      await wait(KEEP_ALIVE_MS / 3);
      const last = await ask();
      // The server's default (10 s) would keep it open far past this. The timer is unref'd: once
      // the connection has closed, it does not hold the file's process open.
      const end = await Promise.race([closed, wait(KEEP_ALIVE_MS + 4000, undefined, { ref: false })]);
      assert.ok(end !== undefined, 'the server closes the idle connection');
      assert.ok(end - last >= KEEP_ALIVE_MS - 100, `open for the whole timeout after the last answer: ${end - last} ms`);
    });
  });
}
