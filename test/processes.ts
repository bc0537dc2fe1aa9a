// Which test files share a process (docs/architecture.md §Running the tests), read by test/run.ts
// and by the lint, which holds a file that shares to what sharing needs (eslint.config.js).

/** Folders whose files run several to a process. */
export const SHARED_FOLDERS: string[] = ['test/api/', 'test/db/', 'test/guards/', 'test/migrations/'];

/**
 * Files of those folders that run alone: each has root-level hooks, which start what its suites
 * use (a server, an app, a directory) and would last as long as the whole group.
 */
export const OWN_PROCESS: string[] = [
  'test/api/dialect-parity.test.ts',
  'test/api/emails-attachments-missing.test.ts',
  'test/api/emails-delivery.test.ts',
  'test/api/enrichment-fetch.test.ts',
  'test/api/enrichment-robots-redirects.test.ts',
  'test/api/enrichment-rooted-hosts.test.ts',
  'test/api/enrichment-values.test.ts',
  'test/api/enrichment.test.ts',
  'test/api/files-import-address.test.ts',
  'test/api/files-import-unfinished.test.ts',
  'test/api/files-import-validators.test.ts',
  'test/api/files-import.test.ts',
  'test/api/files-preconditions.test.ts',
  'test/api/webhook-sender.test.ts',
  'test/db/db-sqlite-pin.test.ts',
  'test/db/sqlite-stat1.test.ts',
  'test/guards/export-code-point-order.test.ts',
  'test/guards/sqlite-group-commit.test.ts',
];
