// The ledger: durable records of lent NICs and per-NIC locks (see DESIGN.md, "a NIC is lent, never given away").
export * from './types';
export { recordKeyFor, assertRecordKey, nestedKey, nestedPrefix } from './keys';
export {
  openLedger,
  readRecord,
  writeRecord,
  writeNewRecordDurableLater,
  deleteRecord,
  scanRecords,
  nestedRecordKeys,
  recordsOfOwner,
  recordPath,
  type Ledger,
  type ScanResult,
} from './store';
export type { PendingDurability } from '../fs/atomic-file';
export { lockNic, lockNicWaiting, lockPath, removeLocksOfHomeNics, type NicLock } from './lock';
export { advanceRecord, appendStep, newRecord } from './steps';
export { recordProblem } from './validate';
