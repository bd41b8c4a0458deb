// Reading the ledger for commands that change nothing (status, cleanup --dry-run): no state directory is
// created on a machine that never lent a NIC (openLedger would make it), but one that could never be made is an
// error, not an empty ledger.
import type { LedgerStatus, LendSession } from '../lend';
import { assertStateDirCouldExist } from './state-dir-check';

export function readLedger(s: LendSession): LedgerStatus {
  assertStateDirCouldExist(s.config.stateDir);
  return s.status();
}
