// Every SQL statement the databases run in this process, whichever path sent it (Kysely, the
// prepared fast readers, a transaction): PostgreSQL's statements are seen through the dialect's
// observer, node:sqlite's statement methods are wrapped once, and a spy collects the statements run while it is on. For tests that
// check what a request reads from storage, not only what it answers.
import { StatementSync } from 'node:sqlite';
import { observeStatements } from '../../src/db/postgres/lanes.ts';
import { PIN_READ } from '../../src/db/sqlite/pin.ts';

interface Spy {
  sent(text: string, params: readonly unknown[]): void;
  /** A statement's answer came (PostgreSQL; a SQLite statement is answered as it runs). */
  answered?(): void;
}

const spies = new Set<Spy>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  // The read-slot pin's read runs on a timer, whatever the requests do: it is not theirs.
  const record = (text: unknown, params: readonly unknown[]) => {
    if (spies.size > 0 && typeof text === 'string' && text !== PIN_READ) for (const spy of spies) spy.sent(text, params);
  };
  const answered = () => {
    for (const spy of spies) spy.answered?.();
  };
  observeStatements((text, params) => {
    record(text, params);
    return spies.size > 0 ? answered : undefined;
  });
  for (const method of ['all', 'get', 'run', 'iterate'] as const) {
    const original = Reflect.get(StatementSync.prototype, method) as (...args: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (this: StatementSync, ...args: unknown[]) {
      record(this.sourceSQL, args);
      try {
        return original.apply(this, args);
      } finally {
        answered();
      }
    };
  }
}

/** Runs `fn` and returns, with its result, the statements run meanwhile. */
export async function statementsOf<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, queries } = await queriesOf(fn);
  return { result, statements: queries.map((q) => q.text) };
}

/** Runs `fn` and returns, with its result, the statements run meanwhile with the values bound to each. */
export async function queriesOf<T>(fn: () => Promise<T>): Promise<{ result: T; queries: Array<{ text: string; params: readonly unknown[] }> }> {
  install();
  const queries: Array<{ text: string; params: readonly unknown[] }> = [];
  const spy: Spy = { sent: (text, params) => queries.push({ text, params }) };
  spies.add(spy);
  try {
    return { result: await fn(), queries };
  } finally {
    spies.delete(spy);
  }
}

/**
 * Runs `fn` and returns its statements in steps: a statement sent before any answer came since
 * the step began (as Promise.all sends them, or a read gathered until the end of the turn,
 * src/db/batched.ts) is in the same step; one sent after an answer came starts the next. On
 * PostgreSQL a step is a round trip a request waits for; on SQLite, where a statement is answered
 * as it runs, every statement is a step.
 */
export async function stepsOf<T>(fn: () => Promise<T>): Promise<{ result: T; steps: string[][] }> {
  install();
  const steps: string[][] = [];
  let answered = true;
  const spy: Spy = {
    sent: (text) => {
      if (answered) steps.push([]);
      answered = false;
      steps.at(-1)!.push(text);
    },
    answered: () => {
      answered = true;
    },
  };
  spies.add(spy);
  try {
    return { result: await fn(), steps };
  } finally {
    spies.delete(spy);
  }
}
