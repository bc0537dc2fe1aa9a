// Garbage collections the process asks for itself (docs/performance.md §Idle memory and wake-ups,
// §Uploads). V8 decides its collections alone, and two of its choices cost memory here: buffers
// outside the heap are collected late (src/files/reclaim.ts), and the young generation, once grown
// by the allocations of start-up, keeps its size while the process idles.
import v8 from 'node:v8';
import vm from 'node:vm';

interface GcOptions {
  type: 'minor' | 'major';
  execution?: 'sync' | 'async';
  /** `last-resort`: the collection V8 makes when memory runs out; it also shrinks the heap's spaces. */
  flavor?: 'regular' | 'last-resort';
}

type Gc = (opts?: GcOptions) => void;
let gc: Gc | null | undefined;

function collector(): Gc | null {
  if (gc === undefined) {
    try {
      // Exposes gc to new contexts only; the application's global scope is unchanged.
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/** A minor GC (a scavenge): frees young objects, and the buffers only they hold. */
export function collectYoung(): void {
  collector()?.({ type: 'minor' });
}

/**
 * A full GC that also gives back what the heap holds beyond its live objects: the young
 * generation shrinks to its smallest, and grows again with the allocation rate once work comes.
 * It pauses the process for tens of milliseconds: for a process about to idle, not one under load.
 */
export function shrinkHeap(): void {
  collector()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * A full GC without shrinking the heap's spaces: frees what only unreachable objects hold outside
 * the heap, such as the statements a SQLite connection's cache evicted (src/db/sqlite/cached.ts).
 */
export function collectFull(): void {
  collector()?.({ type: 'major', execution: 'sync' });
}
