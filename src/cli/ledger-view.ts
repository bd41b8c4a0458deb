// Reading the ledger for commands that change nothing (status, cleanup --dry-run): no state directory is
// created on a machine that never lent a NIC (openLedger would make it), but one that could never be made is an
// error, not an empty ledger.
import type { LendSession } from '../lend';
import { scanRecords, type ScanResult } from '../ledger';
import { assertTrustedStateDirIfPresent } from '../fs/secure-dir';
import { assertStateDirCouldExist } from './state-dir-check';

export function readLedger(s: LendSession): ScanResult {
  assertStateDirCouldExist(s.config.stateDir);
  assertTrustedStateDirIfPresent(s.config.stateDir);
  return scanRecords({ dir: s.config.stateDir });
}
