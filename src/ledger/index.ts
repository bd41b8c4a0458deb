// The ledger: durable records of lent NICs and per-NIC locks (see DESIGN.md, "a NIC is lent, never given away").
export * from './types';
export { recordKeyFor, assertRecordKey, nestedKey, nestedPrefix, type KeySource } from './keys';
export {
  openLedger,
  readRecord,
  writeRecord,
  writeNewRecordDurableLater,
  deleteRecord,
  scanRecords,
  recordKeysWithPrefix,
  recordPath,
  type Ledger,
  type ScanResult,
} from './store';
export type { PendingDurability } from '../fs/atomic-file';
export { lockNic, lockNicWaiting, lockPath, removeLocksOfHomeNics, DEFAULT_LOCK_TIMEOUT_MS, type NicLock, type LockOptions } from './lock';
export { advanceRecord, appendStep, newRecord, type NewRecord } from './steps';
export { recordProblem, isLendRecord } from './validate';
