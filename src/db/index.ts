// The database layer's API (docs/architecture.md §Database layer). Modules import the database
// layer from here only (npm run check holds it): how a read is sent, batched or prepared, how a
// listing is ranked, and which database answers stay behind these names.
export type { BulkLoadState, Db, Executor, Tx } from './types.ts';
export { isUniqueViolation, openDb, ping, storageRefusal } from './database.ts';
export { migrate, type SchemaHeld, schemaHeld } from './migrate.ts';
export { takeMigrationNotes } from './migration-notes.ts';
export { isConnectionLoss, isDeadline, isStatementTimeout, isTransactionConflict } from './connection-loss.ts';
export { outsideBudget, startRequestBudget } from './request-budget.ts';
export { inBackground } from './background.ts';

// Commit signals: a commit wakes the listeners of every process sharing the database.
export { onSignal, signalAfterCommit } from './signals.ts';
export { relayClusterSignals } from './sqlite/signals.ts';

// Transactions: every one is opened by `write`, and its state is a field of its `Tx`.
export { afterCommit, inWrite, write, type WriteOptions } from './write.ts';

// Statements: sent with the transaction's next round trip, after it, or gathered per turn.
export { deferred, deferredInsert, deferredInsertRows, deferredRows, settled } from './pipeline.ts';
export { type KeyedRead, keyedRead } from './keyed.ts';
export { prepared, preparedWrite } from './prepared.ts';
export { insertRows } from './insert-rows.ts';
export { chunks } from './chunks.ts';
export { scan } from './scan.ts';
export { readSnapshot } from './snapshot.ts';

// What a statement means on either database.
export {
  amongKeys,
  eachByKey,
  claimable,
  deferredInsertThen,
  fewTexts,
  holdsText,
  jsonArraysAgg,
  jsonTextElements,
  joinedByKey,
  lockedAgainstDelete,
  lockedForChange,
  lockedForUpdate,
  holdNamedLock,
  preparedInsertThen,
  probeEnd,
  timeFromNow,
} from './portable.ts';

// Ranked listings: pages at any offset, and their upkeep.
export type { LockMode, PartedRead, RankKey, RankPartition } from './rank/index.ts';
export {
  defineRank,
  lockLate,
  lockOrder,
  lockPartition,
  partitionKey,
  rankChange,
  rankChangeAcross,
  rankDelete,
  rankExceptPage,
  rankInsert,
  rankLoadEnd,
  rankLoadKeys,
  rankMoveRows,
  rankPage,
  rankPartedPage,
  rankRebuild,
  takeLateLocks,
} from './rank/index.ts';

// Bulk loads (imports), the log's retention, the planner's statistics.
export { dropIndexesUntilBuilt, planWithValues, statementJournalsInMemory, takeDatabaseAlone, useBulkCache } from './bulk-load.ts';
export { truncateLog } from './erase.ts';
export { schemaInUrl } from './postgres/url-schema.ts';
export { restartLongLog } from './log-bound.ts';
export { type LogEnd, logEnd } from './log-end.ts';
export { refreshStatistics } from './statistics.ts';
export { forServing } from './serving.ts';
export { replanOthers } from './replan.ts';

// SQLite files outside a handle: a command's scratch store, a backup's consistent copy of the database.
export { type ScratchMap, ScratchStore } from './scratch.ts';
export { copySqliteDatabase, sqliteDatabaseFault, sqliteFileHeld, type SqliteFileHeld } from './sqlite/copy.ts';
