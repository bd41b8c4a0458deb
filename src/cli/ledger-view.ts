// Reading the ledger for commands that change nothing (status, cleanup --dry-run): no state directory is
// created on a machine that never lent a NIC (openLedger would make it).
import * as path from 'node:path';
import { stateDir } from '../config';
import { scanRecords, type ScanResult } from '../ledger';

export function readLedger(): ScanResult {
  return scanRecords({ dir: path.resolve(stateDir()) });
}
