// How busy the process's event loop is, for the background work that can wait (the enrichment
// runner, docs/enrichment.md §Under load). The loop's utilization (the share of the time it spent
// running code rather than waiting for I/O) is read over consecutive windows; a process whose
// requests keep its loop at BUSY_UTILIZATION or more is saturated, and a round of background work
// started then takes CPU from those requests (on SQLite the statements themselves run on this loop).
import { performance } from 'node:perf_hooks';

/** The share of a window the loop ran code for the process to count as busy. */
export const BUSY_UTILIZATION = 0.8;

/** The window over which the utilization is read, in ms. */
export const LOAD_WINDOW_MS = 200;

export interface LoadWatch {
  /** Whether the last complete window's utilization reached BUSY_UTILIZATION. */
  busy: () => boolean;
  stop: () => void;
}

export function watchLoad(windowMs = LOAD_WINDOW_MS): LoadWatch {
  let last = performance.eventLoopUtilization();
  let utilization = 0;
  // The timer never keeps the process alive: the poller it serves holds its own.
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
  }, windowMs).unref();
  return {
    busy: () => utilization >= BUSY_UTILIZATION,
    stop: () => clearInterval(timer),
  };
}
