// `sriovctl cleanup [--dry-run] [--json]` — the CI hook, run after a job or before a new cluster:
//   1. finish every incomplete record (a crashed lend is rolled back, a crashed give-back completed),
//   2. give back every NIC the ledger holds,
//   3. find SR-IOV NICs the ledger does not know in any other namespace and return them to the initial one.
// One line per NIC; idempotent; exit 0 when nothing is lost, 3 when any NIC could not be restored.
import type { Command } from 'commander';
import { failureOf, nestingDepth, type GiveBackResult, type LendRecord, type Stray, type StrayScan } from '../lend';
import type { CommandIo, CommandKit } from './command-kit';
import { readLedger } from './ledger-view';
import { ExitCode } from './exit-codes';
import { giveBackActions, removeLocksOfHomeNics } from '../lend';
import { counted } from '../util/plural';
import { giveBackRecord, worst } from './give-back';
import { reasonOf } from './output';
import { vfCountBoundsOf, vfioWaitOption } from './vfio-wait';
import type { SetNumVfsOptions } from '../sriov';

export type CleanupOutcome = GiveBackResult['outcome'] | 'failed' | 'busy' | 'would-give-back' | 'would-return';

/** One NIC in cleanup's report (`--json` prints an array of these). */
export interface CleanupEntry {
  /** Its name at home (ledger) or where it was found (scan). */
  nic: string;
  pciAddress: string | null;
  /** 'ledger': it had a record; 'scan': found in a foreign namespace without one. */
  source: 'ledger' | 'scan';
  outcome: CleanupOutcome;
  /** Its name now (after the action). */
  name: string | null;
  owner: string | null;
  /** Where it was found (scan only). */
  from: string | null;
  warnings: string[];
  error: string | null;
}

export function registerCleanupCommand(program: Command, kit: CommandKit): void {
  program
    .command('cleanup')
    .description('finish and give back every lent NIC, then return stray SR-IOV NICs to the initial namespace')
    .option('--dry-run', 'only say what would be done')
    .option('--json', 'print a JSON array of objects, one per NIC')
    .addOption(vfioWaitOption())
    .action(
      kit.action<{ dryRun?: boolean; json?: boolean; vfioWait?: number }>(
        () => 'cleanup',
        (io, _args, opts) => cleanup(io, { dryRun: !!opts.dryRun, json: !!opts.json, vfCount: vfCountBoundsOf(opts.vfioWait) }),
      ),
    );
}

async function cleanup(io: CommandIo, opts: { dryRun: boolean; json: boolean; vfCount: SetNumVfsOptions }): Promise<ExitCode> {
  const entries = opts.dryRun ? plan(io) : await act(io, opts.vfCount);
  if (opts.json) io.out.json(entries);
  else if (entries.length === 0) io.out.line('nothing to clean up');
  else for (const e of entries) printEntry(io, e);
  return worst(entries.map(exitCodeOfEntry));
}

/** --dry-run: what the ledger holds and what the scan finds; nothing changes (no recover, no lock taken). */
function plan(io: CommandIo): CleanupEntry[] {
  const { records, corrupt } = readLedger(io.session);
  const entries: CleanupEntry[] = records.map((r) => ledgerEntry(r, { outcome: 'would-give-back' }));
  entries.push(...corrupt.map(corruptEntry));
  const scan = scanStrays(io, records, records);
  scan.close();
  for (const s of scan.strays) entries.push(strayEntry(s, { outcome: 'would-return', name: s.originalName ?? s.name }));
  return entries;
}

async function act(io: CommandIo, vfCount: SetNumVfsOptions): Promise<CleanupEntry[]> {
  const before = new Map(readLedger(io.session).records.map((r) => [r.key, r]));
  const entries: CleanupEntry[] = [];

  // 1. finish what crashed half-way, and VF counts an earlier give-back could not put back
  const recovered = await io.session.recover({ vfCount });
  for (const res of recovered.results) {
    const record = before.get(res.key);
    if (record) for (const line of giveBackActions(record, res, io.session.config.stateDir)) io.out.detail(line);
    entries.push(ledgerEntryOf(record, res));
  }
  for (const f of recovered.failures) entries.push(failedLedgerEntry(before.get(f.key), f.key, f.error));
  entries.push(...recovered.corrupt.map(corruptEntry));

  // 2. give back every NIC still lent
  // each record is tried once per run: one that step 1 kept (a VF count still held) is not tried again here
  const triedKeys = new Set([...recovered.results.map((r) => r.key), ...recovered.failures.map((f) => f.key)]);
  // lends nested in others (a pod's VF inside a node) first, so each is reported as its own give-back
  const lent = io.session
    .findRecords()
    .filter((r) => !triedKeys.has(r.key))
    .sort((a, b) => nestingDepth(b.key) - nestingDepth(a.key));
  for (const record of lent) {
    try {
      const report = await giveBackRecord(io.session, record, vfCount);
      for (const line of giveBackActions(record, report.result, io.session.config.stateDir)) io.out.detail(line);
      entries.push(ledgerEntry(record, { ...report.result, warnings: report.warnings }));
    } catch (err) {
      entries.push(failedLedgerEntry(record, record.key, reasonOf(err, io.globals.verbose)));
    }
  }

  // 3. SR-IOV NICs nobody recorded, in namespaces that are not home to anything
  const stillRecorded = io.session.findRecords();
  const scan = scanStrays(io, [...before.values(), ...stillRecorded], stillRecorded);
  try {
    returnStrays(io, scan.strays, entries);
  } finally {
    scan.close();
  }
  // 4. the lock files of NICs that are home (older versions never removed them)
  const locks = removeLocksOfHomeNics(io.session.ledger);
  if (locks > 0) io.out.detail(`removed the lock files of ${counted(locks, 'NIC')} that are home`);
  return entries;
}

function returnStrays(io: CommandIo, strays: Stray[], entries: CleanupEntry[]): void {
  for (const stray of strays) {
    try {
      const res = io.session.returnStray({
        in: { netns: stray.netns },
        name: stray.name,
        pciAddress: stray.pciAddress,
        originalName: stray.originalName ?? undefined,
      });
      entries.push(strayEntry(stray, { outcome: res.outcome, name: res.name, warnings: res.warnings }));
    } catch (err) {
      const busy = failureOf(err).kind === 'Busy';
      entries.push(strayEntry(stray, { outcome: busy ? 'busy' : 'failed', error: reasonOf(err, io.globals.verbose) }));
    }
  }
}

/** The engine's stray scan, its problems said under -v and what it gave up on as warnings. */
function scanStrays(io: CommandIo, homesOf: LendRecord[], recorded: LendRecord[]): StrayScan {
  const scan = io.session.strayNics(homesOf, recorded);
  for (const p of scan.problems) io.out.detail(`scan: ${p}`);
  for (const w of scan.skipped) io.out.warn(`scan: ${w}`);
  return scan;
}

function ledgerEntry(record: LendRecord, r: Partial<CleanupEntry> & { outcome: CleanupOutcome }): CleanupEntry {
  return {
    nic: record.snapshot.name || record.identity.name || record.key,
    pciAddress: record.identity.pciAddress,
    source: 'ledger',
    outcome: r.outcome,
    name: r.name ?? null,
    owner: record.owner,
    from: null,
    warnings: r.warnings ?? [],
    error: r.error ?? null,
  };
}

function ledgerEntryOf(record: LendRecord | undefined, res: GiveBackResult): CleanupEntry {
  if (record) return ledgerEntry(record, res);
  return { nic: res.key, pciAddress: null, source: 'ledger', outcome: res.outcome, name: res.name, owner: res.owner, from: null, warnings: res.warnings, error: null };
}

function failedLedgerEntry(record: LendRecord | undefined, key: string, error: string): CleanupEntry {
  if (record) return ledgerEntry(record, { outcome: 'failed', error });
  return { nic: key, pciAddress: null, source: 'ledger', outcome: 'failed', name: null, owner: null, from: null, warnings: [], error };
}

function corruptEntry(c: { file: string; error: string }): CleanupEntry {
  return { nic: c.file, pciAddress: null, source: 'ledger', outcome: 'failed', name: null, owner: null, from: null, warnings: [], error: `unreadable record: ${c.error}` };
}

function strayEntry(s: Stray, r: Partial<CleanupEntry> & { outcome: CleanupOutcome }): CleanupEntry {
  return {
    nic: s.name,
    pciAddress: s.pciAddress,
    source: 'scan',
    outcome: r.outcome,
    name: r.name ?? null,
    owner: null,
    from: s.netnsPath,
    warnings: r.warnings ?? [],
    error: r.error ?? null,
  };
}

const OUTCOME_TEXT: Record<CleanupOutcome, string> = {
  returned: 'returned',
  'returned-renamed': 'returned under a fallback name',
  'already-home': 'already home',
  gone: 'gone',
  'not-lent': 'already given back',
  failed: 'failed',
  busy: 'failed: busy (another sriovctl holds it)',
  'would-give-back': 'would give back',
  'would-return': 'would return to the initial namespace',
};

function printEntry(io: CommandIo, e: CleanupEntry): void {
  const label = e.pciAddress ? `${e.nic} (${e.pciAddress})` : e.nic;
  const from = e.from ? ` from ${e.from}` : '';
  const by = e.owner ? ` [${e.owner}]` : '';
  const as = e.name && e.name !== e.nic ? ` as ${e.name}` : '';
  const why = e.error && e.outcome !== 'busy' ? `: ${e.error}` : '';
  io.out.line(`${label}${by}${from}: ${OUTCOME_TEXT[e.outcome]}${as}${why}`);
  for (const w of e.warnings) io.out.warn(`${label}: ${w}`);
}

function exitCodeOfEntry(e: CleanupEntry): ExitCode {
  if (e.outcome === 'failed' || e.outcome === 'busy' || e.outcome === 'returned-renamed') return ExitCode.warnings;
  return e.warnings.length > 0 ? ExitCode.warnings : ExitCode.ok;
}
