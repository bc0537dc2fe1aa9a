// What every connection of a process to a SQLite file is opened with.

/** How long a write waits for another process's write transaction before it fails (`database is locked`). */
export const BUSY_TIMEOUT_MS = 5000;
