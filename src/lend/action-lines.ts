// What -v shows a person: each thing done to the kernel (or the ledger) and what it was done to, in the words of
// `ip` and sysfs — not the engine's step names, which are failpoint names for tests.
import * as path from 'node:path';
import type { LendRecord } from '../ledger/types';
import type { GiveBackResult } from './types';
import { describeNamespace } from './namespaces';
import { counted } from '../util/plural';

/** The lines of a lend, from the steps its record went through. */
export function lendActions(record: LendRecord, stateDir: string): string[] {
  const name = homeName(record);
  const target = describeNamespace(record.target);
  return record.history.flatMap((h): string[] => {
    switch (h.step) {
      case 'lend:recorded':
        return [`recorded ${name} in ${recordFile(stateDir, record)}, before anything moves`];
      case 'lend:vf-configured':
        return [`set the lend's VF settings of VF ${record.snapshot.vf?.vf} on its PF ${record.snapshot.vf?.pfName}`];
      case 'lend:altnames-dropped':
        return [`removed altnames ${record.droppedAltnames.join(', ')} of ${name} (taken in ${target})`];
      case 'lend:moved':
        return [`moved ${name} to ${target} as ${record.targetName}`];
      case 'lend:configured':
        return [`set MTU, MAC and link state of ${record.targetName} in ${target}`];
      case 'vfs:recorded':
        return [`recorded the VF count of ${record.vfCount?.pf ?? 'its PF'} at home${h.note ? ` (${h.note})` : ''}`];
      default:
        return [];
    }
  });
}

/**
 * The lines of a give-back of `record`, from what it came to. `vfCountLast`: the give-back left the VF count to a
 * later one (cluster down puts every NIC home first), keeping the record for it.
 */
export function giveBackActions(record: LendRecord, result: GiveBackResult, stateDir: string, vfCountLast = false): string[] {
  const name = homeName(record);
  const home = describeNamespace(record.home);
  const lines: string[] = [];
  const countLater = vfCountLast && !!record.vfCount;
  if (record.vfCount && result.pendingVfCount === undefined && !countLater) {
    lines.push(`put sriov_numvfs of ${record.vfCount.pf} back to ${record.vfCount.before}`);
  }
  switch (result.outcome) {
    case 'returned':
    case 'returned-renamed':
      lines.push(`moved ${record.targetName} from ${describeNamespace(record.target)} back to ${home} as ${result.name}`);
      lines.push(`restored ${result.name}: ${restored(record).join(', ')}`);
      if (record.snapshot.vf) lines.push(`restored the VF settings of VF ${record.snapshot.vf.vf} on its PF ${record.snapshot.vf.pfName}`);
      break;
    case 'already-home':
      lines.push(`${name} was already in ${home}`);
      break;
    case 'gone':
      lines.push(`${name} is gone (a virtual NIC, destroyed with its namespace)`);
      break;
    case 'not-lent':
      return lines;
  }
  lines.push(result.pendingVfCount || countLater ? `kept ${recordFile(stateDir, record)} (its VF count is still to put back)` : `removed ${recordFile(stateDir, record)}`);
  return lines;
}

/** What a give-back puts back on the NIC itself, from its snapshot. */
function restored(record: LendRecord): string[] {
  const snap = record.snapshot;
  const parts = [`MTU ${snap.mtu}`];
  if (snap.mac) parts.push(`MAC ${snap.mac}`);
  if (snap.l3) parts.push(counted(snap.l3.addresses.length, 'address', 'addresses'), counted(snap.l3.routes.length, 'route'));
  parts.push(snap.up ? 'up' : 'down');
  return parts;
}

/**
 * The line of cluster down's last step for a PF, its VF count put back once every NIC was home: the record kept for
 * it goes now, unless the count is still pending (a VFIO holder), when it stays for cleanup.
 */
export function vfCountRestoredActions(record: LendRecord, result: GiveBackResult, stateDir: string): string[] {
  return result.pendingVfCount ? [] : [`removed ${recordFile(stateDir, record)}`];
}

function homeName(record: LendRecord): string {
  return record.snapshot.name || record.identity.name || record.key;
}

function recordFile(stateDir: string, record: LendRecord): string {
  return path.join(stateDir, 'records', `${record.key}.json`);
}
