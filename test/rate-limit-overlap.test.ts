// A read does not wait for a shared rate limit's answer before it starts (src/http/pipeline.ts,
// docs/architecture.md §Request pipeline): the read and the decision run side by side, and the
// answer is sent once both are in. What must not change: a refusal answers 429 and nothing of the
// read, before a read's own error (404) and before a missing scope (403). The limiter here answers
// only when the test says so, as Redis or the cluster primary would, later.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RateCategory, RateDecision, RateLimiter } from '../src/rate-limit/bucket.ts';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from './helpers/app.ts';
import { watchStatements } from './helpers/sql-spy.ts';

const ALLOW: RateDecision = { allowed: true, limit: 10, remaining: 9, reset: 1, retryAfter: 0 };
const REFUSE: RateDecision = { allowed: false, limit: 10, remaining: 0, reset: 1, retryAfter: 1 };

/** Writes are not limited; each read's decision waits until the test gives it. */
class HeldLimiter implements RateLimiter {
  #asked: (answer: (d: RateDecision) => void) => void = () => {};
  /** Resolves, with the function that answers it, when the next decision is asked for. */
  next(): Promise<(d: RateDecision) => void> {
    return new Promise((resolve) => (this.#asked = resolve));
  }
  consume(_workspaceId: string, category: RateCategory): null | Promise<RateDecision> {
    if (category === 'Write') return null;
    return new Promise((resolve) => this.#asked(resolve));
  }
  async close(): Promise<void> {}
}

const limiter = new HeldLimiter();

/** Turns of the event loop until `done()` holds, at most `turns` of them. */
async function until(done: () => boolean, turns = 500): Promise<boolean> {
  for (let i = 0; i < turns && !done(); i++) await new Promise((r) => setImmediate(r));
  return done();
}

/** GET `url`; once its decision is asked for, whether the list was read before it is given `decision`. */
async function readWith(t: TestApp, secret: string, url: string, decision: RateDecision) {
  const watch = watchStatements();
  try {
    const asked = limiter.next();
    const response = call(t, secret, 'GET', url);
    const answer = await asked;
    const readFirst = await until(() => watch.statements.some((q) => /from "lists"/.test(q)));
    answer(decision);
    return { res: await response, readFirst };
  } finally {
    watch.stop();
  }
}

await eachDialect(
  'a read alongside its rate decision',
  (ctx) => {
    let s: { workspaceId: string; userId: string; secret: string };
    let listId: string;
    test('the list is read while the decision is pending, and answered once it allows', async () => {
      const t = ctx();
      s = await seedWorkspace(t);
      listId = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Overlap', $objectType: 'account' } })).json().id;
      const { res, readFirst } = await readWith(t, s.secret, `/v1/lists/${listId}`, ALLOW);
      assert.ok(readFirst, 'the read did not wait for the decision');
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().id, listId);
      assert.equal(res.headers['x-ratelimit-remaining'], '9');
    });

    test('a refusal answers 429 and nothing of the read', async () => {
      const { res } = await readWith(ctx(), s.secret, `/v1/lists/${listId}`, REFUSE);
      assert.equal(res.statusCode, 429);
      assert.equal(res.json().error.code, 'rate_limited');
      assert.equal(res.headers['retry-after'], '1');
      assert.ok(!res.body.includes(listId), 'no part of the list');
    });

    test("a refusal comes before the read's own error", async () => {
      const t = ctx();
      assert.equal((await readWith(t, s.secret, '/v1/lists/lst_missing', REFUSE)).res.statusCode, 429);
      assert.equal((await readWith(t, s.secret, '/v1/lists/lst_missing', ALLOW)).res.statusCode, 404);
    });

    test('a refusal comes before a missing scope, and a key without the scope reads nothing', async () => {
      const t = ctx();
      const narrow = await keyFor(t, s.workspaceId, s.userId, ['contacts:read']);
      const refused = await readWith(t, narrow, `/v1/lists/${listId}`, REFUSE);
      assert.equal(refused.res.statusCode, 429);
      const allowed = await readWith(t, narrow, `/v1/lists/${listId}`, ALLOW);
      assert.equal(allowed.res.statusCode, 403);
      assert.equal(allowed.readFirst, false, 'the scope is checked before the read');
    });
  },
  { deps: (deps) => void (deps.rateLimiter = limiter) },
);
