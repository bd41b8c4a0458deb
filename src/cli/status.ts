// `sriovctl status [--json]`: every NIC the ledger holds (CNI attachments, attach, cluster nodes alike), with
// where it is now, who has it and since when.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { queryDaemon } from '../daemon/query';
import type { DaemonStats } from '../daemon/server';
import { DEFAULT_SOCKET } from '../config';
import { socketOf } from './daemon';
import { describeNamespace, verifiedPid, type LendRecord, type Whereabouts } from '../lend';
import type { CommandIo, CommandKit } from './command-kit';
import { readLedger } from './ledger-view';
import { ExitCode } from './exit-codes';
import { nicLabel } from './give-back';
import { reasonOf } from './output';
import { formatTable } from './table';
import { ageOf } from './age';
import { counted } from '../util/plural';

/** One lent NIC, as `status --json` prints it (a contract for scripts). */
export interface StatusEntry {
  key: string;
  /** Its name at home. */
  nic: string;
  pciAddress: string | null;
  owner: string;
  /** 'lent', or an unfinished 'lending' / 'returning' / 'rolling-back' (cleanup finishes those). */
  phase: LendRecord['phase'];
  since: string;
  home: { namespace: string; path: string | null; initial: boolean };
  target: { namespace: string; path: string | null; pid: number | null; name: string };
  now: Whereabouts;
  /**
   * A give-back left this PF's VF count to put back (the NIC is home, its record kept): the PF and the count it
   * must get back; `sriovctl cleanup` finishes it. Null otherwise.
   */
  pending: { pf: string; vfCount: number } | null;
}

export function registerStatusCommand(program: Command, kit: CommandKit): void {
  program
    .command('status')
    .description('show every lent NIC: where it is now, its owner, and since when')
    .option('--json', 'print a JSON array of objects')
    .action(kit.action<{ json?: boolean }>(() => 'status', (io, _args, opts) => status(io, !!opts.json)));
}

/**
 * One line on the daemon at SRIOVCTL_SOCKET: its pid, uptime and request counts — or, when one is expected (the
 * variable is set, or its socket is there) but none serves, why not. Null on a machine that runs no daemon.
 */
async function daemonLine(io: CommandIo): Promise<string | null> {
  const socket = socketOf(io);
  const state = await queryDaemon(socket);
  if (!state.serving) return socket !== DEFAULT_SOCKET || existsSync(socket) ? `daemon: none (${state.reason})` : null;
  const s = state.stats;
  const verbs = Object.entries(s.requests.byVerb).map(([v, n]) => `${v} ${n}`).join(', ');
  return (
    `daemon: pid ${s.pid} on ${s.socket}, up ${s.uptimeSeconds} s, ${counted(s.requests.total, 'request')}` +
    `${verbs ? ` (${verbs})` : ''}, ${s.requests.failed} failed, ${s.inFlight} in flight${s.carrierWatches ? `, ${s.carrierWatches} waiting for carrier` : ''}, ${s.declined} sent to the one-shot plugin, ${s.refused} refused${sweepNote(s)}`
  );
}

/** What its sweeps of abandoned attachments gave back, and a last one that failed (a daemon too old to sweep: nothing). */
function sweepNote(s: DaemonStats): string {
  const sweep = s.sweep as DaemonStats['sweep'] | undefined;
  if (!sweep) return '';
  const given = sweep.gaveBack ? `, ${counted(sweep.gaveBack, 'abandoned NIC')} given back` : '';
  const last = sweep.last;
  const failed = last?.error ? ', its last sweep could not read the ledger' : last?.failed ? `, ${last.failed} failed in its last sweep` : '';
  return given + failed;
}

async function status(io: CommandIo, json: boolean): Promise<ExitCode> {
  const { records, corrupt } = readLedger(io.session);
  const entries = records.map((r) => statusEntry(r, io));
  for (const c of corrupt) io.out.warn(`unreadable record ${c.file}: ${c.error} (run sriovctl cleanup)`);
  if (json) io.out.json(entries);
  else if (entries.length === 0) io.out.line('no NIC is lent');
  else io.out.line(formatTable(['NIC', 'OWNER', 'PHASE', 'NOW', 'AGE'], entries.map(row)));
  const pending = entries.filter((e) => e.pending);
  for (const e of pending) io.out.warn(`${label(e)}: pending: VF count of ${e.pending!.pf} to put back to ${e.pending!.vfCount} (sriovctl cleanup finishes it)`);
  const daemon = json ? null : await daemonLine(io);
  if (daemon) io.out.line(daemon);
  // like an unreadable record, something is left to finish
  return corrupt.length > 0 || pending.length > 0 ? ExitCode.warnings : ExitCode.ok;
}

function statusEntry(r: LendRecord, io: CommandIo): StatusEntry {
  let now: Whereabouts;
  try {
    now = io.session.whereIs(r);
  } catch (err) {
    io.out.warn(`${nicLabel(r)}: cannot tell where it is: ${reasonOf(err, io.globals.verbose)}`);
    now = { place: 'unknown', name: null, namespace: null };
  }
  return {
    key: r.key,
    nic: r.snapshot.name || r.identity.name,
    pciAddress: r.identity.pciAddress,
    owner: r.owner,
    phase: r.phase,
    since: r.createdAt,
    home: { namespace: describeNamespace(r.home), path: r.home.path, initial: r.home.initial },
    target: { namespace: describeNamespace(r.target), path: r.target.path, pid: verifiedPid(r.target), name: r.targetName },
    now,
    pending: r.phase === 'returning' && r.vfCount ? { pf: r.vfCount.pf, vfCount: r.vfCount.before } : null,
  };
}

function row(e: StatusEntry): string[] {
  return [label(e), e.owner, e.pending ? 'pending' : e.phase, describeNow(e.now), ageOf(e.since)];
}

function label(e: StatusEntry): string {
  return e.pciAddress ? `${e.nic} (${e.pciAddress})` : e.nic;
}

function describeNow(w: Whereabouts): string {
  switch (w.place) {
    case 'unknown':
      return 'not found';
    case 'not-moved':
      return `not moved (${w.name ?? '?'} in ${w.namespace})`;
    default:
      return `${w.place}: ${w.name} in ${w.namespace}`;
  }
}
