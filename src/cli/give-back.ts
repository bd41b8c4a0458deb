// Giving back one record from the CLI (detach, cleanup): the engine undoes everything from the record (a VF count
// included); this file says how it went, one line per NIC.
import type { GiveBackOptions, GiveBackResult, LendRecord, LendSession } from '../lend';
import type { SetNumVfsOptions } from '../sriov';
import { ExitCode } from './exit-codes';
import { giveBackActions } from '../lend';
import type { Output } from './output';

/** Lock wait: an attach or a CNI DEL may hold the NIC for a moment. */
const GIVE_BACK_LOCK_TIMEOUT_MS = 10_000;

export interface GiveBackReport {
  result: GiveBackResult;
  /** Everything worth a warning, including the VF count. */
  warnings: string[];
  exitCode: ExitCode;
}

/**
 * Give one record back. A VF count that could not be put back keeps the record (the NIC is home): its warning says
 * so, and the exit code is not ok.
 */
export async function giveBackRecord(s: LendSession, record: LendRecord, vfCount: SetNumVfsOptions): Promise<GiveBackReport> {
  return reportOf(await s.giveBack(record.key, { ...giveBackOptions(vfCount), owner: record.owner }));
}

/** How the CLI gives back: waiting a moment for the NIC's lock, the VF count within `vfCount`. */
export function giveBackOptions(vfCount: SetNumVfsOptions): GiveBackOptions {
  return { lockTimeoutMs: GIVE_BACK_LOCK_TIMEOUT_MS, vfCount };
}

/** One give-back's report: anything short of clean (a fallback name, a VF count kept, a warning) is not ok. */
export function reportOf(result: GiveBackResult): GiveBackReport {
  const warnings = result.warnings;
  const clean = result.outcome !== 'returned-renamed' && !result.pendingVfCount && warnings.length === 0;
  const exitCode = clean ? ExitCode.ok : ExitCode.warnings;
  return { result, warnings, exitCode };
}

/** A give-back's outcome in a person's words (the outcome's own code stays in --json). */
export const OUTCOME_TEXT: Readonly<Record<GiveBackResult['outcome'], string>> = {
  returned: 'returned',
  'returned-renamed': 'returned under a fallback name',
  'already-home': 'already home',
  gone: 'gone (a virtual NIC, destroyed with its namespace)',
  'not-lent': 'not lent',
};

/** "enp3s0f1 (0000:03:00.1): returned as enp3s0f1 to /proc/1/ns/net" */
export function giveBackLine(record: LendRecord, report: GiveBackReport): string {
  const r = report.result;
  const as = r.name ? ` as ${r.name}` : '';
  return `${nicLabel(record)}: ${OUTCOME_TEXT[r.outcome]}${as}`;
}

export function printGiveBack(out: Output, record: LendRecord, report: GiveBackReport, stateDir: string): void {
  for (const line of giveBackActions(record, report.result, stateDir)) out.detail(line);
  out.line(giveBackLine(record, report));
  for (const note of leftToOwner(record)) out.line(`${nicLabel(record)}: left to its owner: ${note}`);
  for (const w of report.warnings) out.warn(`${nicLabel(record)}: ${w}`);
}

/** What the snapshot saw and did not record (a DHCP lease, SLAAC): its daemon or the kernel makes it again. */
export function leftToOwner(record: LendRecord): string[] {
  return record.snapshot.l3?.leftToOwner ?? [];
}

/** How a NIC is named in output: its home name, with its PCI address when it has one. */
export function nicLabel(record: LendRecord): string {
  const name = record.snapshot.name || record.identity.name || record.key;
  return record.identity.pciAddress ? `${name} (${record.identity.pciAddress})` : name;
}

/** The worst of several exit codes (failed > warnings > ok). */
export function worst(codes: ExitCode[]): ExitCode {
  if (codes.includes(ExitCode.failed)) return ExitCode.failed;
  if (codes.includes(ExitCode.warnings)) return ExitCode.warnings;
  return ExitCode.ok;
}
