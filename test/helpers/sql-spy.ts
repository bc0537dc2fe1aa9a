// Every SQL statement the databases run in this process, whichever path sent it (Kysely, the
// prepared fast readers, a transaction): PostgreSQL's statements are seen through the dialect's
// observer, node:sqlite's statement methods are wrapped once, and a spy collects the statements run while it is on. For tests that
// check what a request reads from storage, not only what it answers.
import { StatementSync } from 'node:sqlite';
import { observeStatements } from '../../src/db/postgres.ts';

const spies = new Set<(text: string) => void>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const record = (text: unknown) => {
    if (spies.size > 0 && typeof text === 'string') for (const spy of spies) spy(text);
  };
  observeStatements(record);
  for (const method of ['all', 'get', 'run', 'iterate'] as const) {
    const original = Reflect.get(StatementSync.prototype, method) as (...args: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (this: StatementSync, ...args: unknown[]) {
      record(this.sourceSQL);
      return original.apply(this, args);
    };
  }
}

/** Runs `fn` and returns, with its result, the statements run meanwhile. */
export async function statementsOf<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  install();
  const statements: string[] = [];
  const spy = (text: string) => statements.push(text);
  spies.add(spy);
  try {
    return { result: await fn(), statements };
  } finally {
    spies.delete(spy);
  }
}

/**
 * Runs `fn` and returns its statements in steps: those sent in one turn of the event loop (as
 * Promise.all sends them) form a step; a statement sent once another's answer came is in a later
 * one. On PostgreSQL a step is a round trip a request waits for.
 */
export async function stepsOf<T>(fn: () => Promise<T>): Promise<{ result: T; steps: string[][] }> {
  install();
  let turn = 0;
  let on = true;
  const tick = () => {
    turn++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  const byTurn = new Map<number, string[]>();
  const spy = (text: string) => {
    const step = byTurn.get(turn) ?? [];
    step.push(text);
    byTurn.set(turn, step);
  };
  spies.add(spy);
  try {
    return { result: await fn(), steps: [...byTurn.values()] };
  } finally {
    on = false;
    spies.delete(spy);
  }
}
