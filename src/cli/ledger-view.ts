// Reading the ledger for commands that change nothing (status, cleanup --dry-run): no state directory is
// created on a machine that never lent a NIC (openLedger would make it).
import type { LendSession } from '../lend';
import { scanRecords, type ScanResult } from '../ledger';

export function readLedger(s: LendSession): ScanResult {
  return scanRecords({ dir: s.config.stateDir });
}
