// Reading the ledger for commands that change nothing (status, cleanup --dry-run): no state directory is
// created on a machine that never lent a NIC (openLedger would make it).
import type { LendSession } from '../lend';
import { scanRecords, type ScanResult } from '../ledger';
import { assertTrustedStateDirIfPresent } from '../secure-dir';

export function readLedger(s: LendSession): ScanResult {
  assertTrustedStateDirIfPresent(s.config.stateDir);
  return scanRecords({ dir: s.config.stateDir });
}
