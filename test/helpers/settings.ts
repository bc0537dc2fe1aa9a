// A module's tuning object (IMPORT_CHUNK, BULK_LOAD…) changed for one suite only. A test process
// runs several files one after another (docs/architecture.md §Writing a test file), so what a
// suite changes in a module it puts back once its tests are done.
import { after, before } from 'node:test';

/** `values` in `target` for the tests of the suite it is called in; the old ones after them. */
export function useSettings<T extends object>(target: T, values: Partial<T>): void {
  keepSettings(target);
  before(() => Object.assign(target, values));
}

/** Each target as it was before the suite it is called in, again after it: for tests that change it. */
export function keepSettings(...targets: object[]): void {
  const saved = targets.map((t) => ({ ...t }));
  after(() => targets.forEach((t, i) => Object.assign(t, saved[i])));
}
